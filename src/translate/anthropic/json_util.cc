// See json_util.h.
#include "translate/anthropic/json_util.h"

#include <cmath>

#include "translate/json_depth.h"

namespace rolter::anthropic {

bool parse_json(std::string_view text, Json& out) {
  if (!json_depth_within(text, kMaxDepth)) return false;
  out = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  return !out.is_discarded();
}

std::string dump_json(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

const Json* member(const Json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

const std::string* string_member(const Json& object, const char* key) {
  const Json* value = member(object, key);
  if (value == nullptr || !value->is_string()) return nullptr;
  return value->get_ptr<const std::string*>();
}

std::optional<uint64_t> to_u64(const Json& value) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  if (value.is_number_integer()) {
    const int64_t v = value.get<int64_t>();
    if (v < 0) return std::nullopt;
    return static_cast<uint64_t>(v);
  }
  if (value.is_number_float()) {
    const double v = value.get<double>();
    // 2^64 exactly is out of range; a cast of it or of NaN would be UB.
    if (!(v >= 0 && v < 18446744073709551616.0) || std::floor(v) != v) return std::nullopt;
    return static_cast<uint64_t>(v);
  }
  return std::nullopt;
}

uint64_t u64_member(const Json& object, const char* key) {
  const Json* value = member(object, key);
  if (value == nullptr) return 0;
  return to_u64(*value).value_or(0);
}

TranslateError bad_field(std::string param, std::string message) {
  return TranslateError{.status = 400, .message = std::move(message), .param = std::move(param)};
}

TranslateError bad_upstream(std::string message) {
  return TranslateError{.status = 502, .message = std::move(message), .param = {}};
}

std::string at(std::string_view base, size_t index) {
  std::string out(base);
  out += '[';
  out += std::to_string(index);
  out += ']';
  return out;
}

}  // namespace rolter::anthropic
