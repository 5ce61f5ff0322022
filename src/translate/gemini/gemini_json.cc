#include "translate/gemini/gemini_json.h"

#include "translate/json_depth.h"

namespace rolter::gemini {
namespace {

bool unreserved(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

}  // namespace

std::optional<Json> parse_json(std::string_view text) {
  if (!json_depth_within(text, kMaxJsonDepth)) return std::nullopt;
  Json value = Json::parse(text.begin(), text.end(), nullptr, false);
  if (value.is_discarded()) return std::nullopt;
  return value;
}

std::string dump_json(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

const Json* member(const Json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

const std::string* string_member(const Json& object, const char* key) {
  const Json* value = member(object, key);
  return value ? value->get_ptr<const std::string*>() : nullptr;
}

const Json* object_member(const Json& object, const char* key) {
  const Json* value = member(object, key);
  return value && value->is_object() ? value : nullptr;
}

const Json* array_member(const Json& object, const char* key) {
  const Json* value = member(object, key);
  return value && value->is_array() ? value : nullptr;
}

std::optional<uint64_t> count_member(const Json& object, const char* key) {
  const Json* value = member(object, key);
  if (value == nullptr) return std::nullopt;
  if (const auto* u = value->get_ptr<const Json::number_unsigned_t*>()) return *u;
  if (const auto* i = value->get_ptr<const Json::number_integer_t*>(); i && *i >= 0) {
    return static_cast<uint64_t>(*i);
  }
  return std::nullopt;
}

TranslateError bad_request(std::string param, std::string message) {
  return TranslateError{400, std::move(message), std::move(param)};
}

TranslateError bad_upstream(std::string message) {
  return TranslateError{502, std::move(message), ""};
}

std::string model_path(std::string_view model, std::string_view method) {
  if (model.starts_with("models/")) model.remove_prefix(7);
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string path = "/v1beta/models/";
  for (unsigned char c : model) {
    if (unreserved(c)) {
      path.push_back(static_cast<char>(c));
    } else {
      path.push_back('%');
      path.push_back(kHex[c >> 4]);
      path.push_back(kHex[c & 15]);
    }
  }
  path.push_back(':');
  path.append(method);
  return path;
}

std::string target_model(const Json& client_body, const TranslateOptions& options) {
  if (!options.model.empty()) return options.model;
  const std::string* model = string_member(client_body, "model");
  return model ? *model : std::string();
}

}  // namespace rolter::gemini
