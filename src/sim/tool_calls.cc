#include "sim/tool_calls.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <utility>

#include "common/hash.h"
#include "sim/text_generator.h"

namespace rolter::sim {
namespace {

using Json = nlohmann::json;
// Ordered so that arguments list the properties in the order the schema text gives them.
using OrderedJson = nlohmann::ordered_json;

// Schemas nest rarely more than a few levels; this bounds the work on a hostile one.
constexpr int kMaxSchemaDepth = 8;

struct Offered {
  std::string name;
  const Json* schema = nullptr;  // may be null
};

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

std::string string_field(const Json& object, const char* key) {
  if (!object.is_object()) return {};
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The tool named `wanted` among `offered` (the first when `wanted` is empty).
ToolPick choose(const std::vector<Offered>& offered, const std::string& wanted) {
  if (offered.empty()) return std::optional<ToolChoice>();
  for (const Offered& tool : offered) {
    if (!wanted.empty() && tool.name != wanted) continue;
    const std::string schema = tool.schema != nullptr ? tool.schema->dump() : "{}";
    return std::optional<ToolChoice>(ToolChoice{tool.name, schema});
  }
  return tl::make_unexpected("tool choice names '" + wanted + "', which is not among the tools");
}

const Json* last_of(const Json& body, const char* key) {
  auto it = body.find(key);
  if (it == body.end() || !it->is_array() || it->empty()) return nullptr;
  return &it->back();
}

// True when `content` (an Anthropic message's content, or a Gemini content's parts) holds a part
// with `type` == type_value or a key named `key`.
bool has_part(const Json* parts, const char* type_value, const char* key) {
  if (parts == nullptr || !parts->is_array()) return false;
  return std::any_of(parts->begin(), parts->end(), [&](const Json& part) {
    if (!part.is_object()) return false;
    if (type_value != nullptr && string_field(part, "type") == type_value) return true;
    return key != nullptr && part.contains(key);
  });
}

// ---- argument generation -----------------------------------------------------------------------

std::string schema_type(const OrderedJson& schema) {
  auto type = schema.find("type");
  if (type != schema.end() && type->is_string()) return lower(type->get<std::string>());
  if (type != schema.end() && type->is_array()) {
    for (const OrderedJson& t : *type) {
      if (t.is_string() && lower(t.get<std::string>()) != "null")
        return lower(t.get<std::string>());
    }
  }
  if (schema.contains("properties")) return "object";
  if (schema.contains("items")) return "array";
  return "string";
}

OrderedJson value_for(uint64_t seed, const std::string& path, const OrderedJson& schema, int depth);

OrderedJson object_for(uint64_t seed, const std::string& path, const OrderedJson& schema,
                       int depth) {
  OrderedJson out = OrderedJson::object();
  auto properties = schema.find("properties");
  if (properties == schema.end() || !properties->is_object()) return out;
  for (const auto& [name, sub] : properties->items()) {
    out[name] = value_for(seed, path + "/" + name, sub, depth + 1);
  }
  return out;
}

// One value for `schema`; `path` names the property ("tool/prop/sub") and seeds words and numbers.
OrderedJson value_for(uint64_t seed, const std::string& path, const OrderedJson& schema,
                      int depth) {
  if (depth > kMaxSchemaDepth || !schema.is_object()) return nullptr;
  if (auto e = schema.find("enum"); e != schema.end() && e->is_array() && !e->empty()) {
    return e->front();
  }
  if (auto c = schema.find("const"); c != schema.end()) return *c;
  for (const char* branch : {"anyOf", "oneOf", "allOf"}) {
    auto b = schema.find(branch);
    if (b != schema.end() && b->is_array() && !b->empty()) {
      return value_for(seed, path, b->front(), depth + 1);
    }
  }
  const std::string type = schema_type(schema);
  if (type == "object") return object_for(seed, path, schema, depth);
  if (type == "array") {
    auto items = schema.find("items");
    const OrderedJson item = items != schema.end() ? *items : OrderedJson::object();
    return OrderedJson::array({value_for(seed, path + "/0", item, depth + 1)});
  }
  if (type == "integer" || type == "number") {
    return static_cast<int64_t>(hash64(path, seed) % 9 + 1);
  }
  if (type == "boolean") return true;
  if (type == "null") return nullptr;
  return generate_tokens(seed, path, 1).front();
}

}  // namespace

ToolPick pick_openai_tool(const Json& body) {
  const Json* last = last_of(body, "messages");
  if (last == nullptr || string_field(*last, "role") != "user") return std::optional<ToolChoice>();
  auto tools = body.find("tools");
  if (tools == body.end() || !tools->is_array()) return std::optional<ToolChoice>();
  std::vector<Offered> offered;
  for (const Json& tool : *tools) {
    if (!tool.is_object()) continue;
    auto fn = tool.find("function");
    if (fn == tool.end() || !fn->is_object()) continue;
    auto params = fn->find("parameters");
    offered.push_back({string_field(*fn, "name"), params != fn->end() ? &*params : nullptr});
  }
  std::string wanted;
  if (auto choice = body.find("tool_choice"); choice != body.end()) {
    if (choice->is_string() && *choice == "none") return std::optional<ToolChoice>();
    if (choice->is_object()) wanted = string_field(choice->value("function", Json()), "name");
  }
  return choose(offered, wanted);
}

ToolPick pick_anthropic_tool(const Json& body) {
  const Json* last = last_of(body, "messages");
  if (last == nullptr || string_field(*last, "role") != "user") return std::optional<ToolChoice>();
  auto content = last->find("content");
  if (has_part(content != last->end() ? &*content : nullptr, "tool_result", nullptr)) {
    return std::optional<ToolChoice>();
  }
  auto tools = body.find("tools");
  if (tools == body.end() || !tools->is_array()) return std::optional<ToolChoice>();
  std::vector<Offered> offered;
  for (const Json& tool : *tools) {
    if (!tool.is_object()) continue;
    auto schema = tool.find("input_schema");
    offered.push_back({string_field(tool, "name"), schema != tool.end() ? &*schema : nullptr});
  }
  std::string wanted;
  if (auto choice = body.find("tool_choice"); choice != body.end() && choice->is_object()) {
    const std::string type = string_field(*choice, "type");
    if (type == "none") return std::optional<ToolChoice>();
    if (type == "tool") wanted = string_field(*choice, "name");
  }
  return choose(offered, wanted);
}

ToolPick pick_gemini_tool(const Json& body) {
  const Json* last = last_of(body, "contents");
  if (last == nullptr || !last->is_object()) return std::optional<ToolChoice>();
  const std::string role = string_field(*last, "role");
  auto parts = last->find("parts");
  if ((!role.empty() && role != "user") ||
      has_part(parts != last->end() ? &*parts : nullptr, nullptr, "functionResponse")) {
    return std::optional<ToolChoice>();
  }
  std::vector<Offered> offered;
  if (auto tools = body.find("tools"); tools != body.end() && tools->is_array()) {
    for (const Json& tool : *tools) {
      auto decls = tool.is_object() ? tool.find("functionDeclarations") : tool.end();
      if (!tool.is_object() || decls == tool.end() || !decls->is_array()) continue;
      for (const Json& d : *decls) {
        if (!d.is_object()) continue;
        auto schema = d.find("parameters");
        if (schema == d.end()) schema = d.find("parametersJsonSchema");
        offered.push_back({string_field(d, "name"), schema != d.end() ? &*schema : nullptr});
      }
    }
  }
  std::string wanted;
  auto tool_config = body.find("toolConfig");
  const Json config = tool_config != body.end() && tool_config->is_object()
                          ? tool_config->value("functionCallingConfig", Json())
                          : Json();
  if (config.is_object()) {
    if (lower(string_field(config, "mode")) == "none") return std::optional<ToolChoice>();
    auto allowed = config.find("allowedFunctionNames");
    if (allowed != config.end() && allowed->is_array() && !allowed->empty() &&
        allowed->front().is_string()) {
      wanted = allowed->front().get<std::string>();
    }
  }
  return choose(offered, wanted);
}

std::string tool_arguments(uint64_t seed, const ToolChoice& tool) {
  OrderedJson schema = OrderedJson::parse(tool.schema, nullptr, /*allow_exceptions=*/false);
  if (schema.is_discarded()) schema = OrderedJson::object();
  OrderedJson args = object_for(seed, tool.name, schema, 0);
  return args.dump();
}

std::vector<std::string> split_arguments(std::string_view arguments) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < arguments.size()) {
    size_t end = std::min(arguments.size(), at + kArgumentFragmentBytes);
    // Never end a fragment before a UTF-8 continuation byte (10xxxxxx).
    while (end < arguments.size() && (static_cast<unsigned char>(arguments[end]) & 0xC0) == 0x80) {
      ++end;
    }
    out.emplace_back(arguments.substr(at, end - at));
    at = end;
  }
  return out;
}

}  // namespace rolter::sim
