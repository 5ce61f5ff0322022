// OpenAI tools and tool_choice as Gemini functionDeclarations and functionCallingConfig.
//
//   tools[i] {type "function", function {name, description, parameters}}
//       → tools[0].functionDeclarations[i] {name, description, parameters (gemini_schema)}
//   tool_choice "auto" → AUTO, "none" → NONE, "required" → ANY,
//       {type "function", function {name}} → ANY with allowedFunctionNames [name]
// Parameters that describe an object without properties are left out: Gemini refuses an OBJECT
// with empty properties, and a function without parameters says the same thing. "strict" has no
// Gemini equivalent and is dropped (Gemini always validates calls against the declaration).
// toolConfig is only sent with declarations: without tools there is nothing for it to steer.
#include "translate/gemini/gemini_request_parts.h"

namespace rolter::gemini {
namespace {

bool has_properties(const Json& schema) {
  const Json* properties = object_member(schema, "properties");
  return properties != nullptr && !properties->empty();
}

tl::expected<Json, TranslateError> declaration(const Json& tool, const std::string& where) {
  const std::string* type = string_member(tool, "type");
  if (type != nullptr && *type != "function") {
    return tl::unexpected(
        bad_request(where + ".type", "tool type \"" + *type + "\" cannot be translated to Gemini"));
  }
  const Json* function = object_member(tool, "function");
  const std::string* name = function ? string_member(*function, "name") : nullptr;
  if (name == nullptr)
    return tl::unexpected(
        bad_request(where + ".function.name", where + ".function.name must be a string"));
  Json out = {{"name", *name}};
  if (const std::string* description = string_member(*function, "description")) {
    out["description"] = *description;
  }
  if (const Json* parameters = member(*function, "parameters")) {
    auto schema = gemini_schema(*parameters, where + ".function.parameters");
    if (!schema) return schema;
    const Json* type = member(*schema, "type");
    const bool empty_object = type != nullptr && *type == "object" && !has_properties(*schema);
    if (!empty_object && !schema->empty()) out["parameters"] = std::move(*schema);
  }
  return out;
}

tl::expected<Json, TranslateError> calling_config(const Json& choice) {
  if (const auto* mode = choice.get_ptr<const std::string*>()) {
    if (*mode == "auto") return Json{{"mode", "AUTO"}};
    if (*mode == "none") return Json{{"mode", "NONE"}};
    if (*mode == "required") return Json{{"mode", "ANY"}};
  } else if (const std::string* type = string_member(choice, "type"); type && *type == "function") {
    const Json* function = object_member(choice, "function");
    if (const std::string* name = function ? string_member(*function, "name") : nullptr) {
      return Json{{"mode", "ANY"}, {"allowedFunctionNames", Json::array({*name})}};
    }
  }
  return tl::unexpected(
      bad_request("tool_choice", "tool_choice must be auto, none, required or a named function"));
}

}  // namespace

Status add_tools(const Json& request, Json& body) {
  static const Json kNoTools = Json::array();
  const Json* tools = member(request, "tools");
  if (tools == nullptr) tools = &kNoTools;
  if (!tools->is_array()) return tl::unexpected(bad_request("tools", "tools must be an array"));
  Json declarations = Json::array();
  for (size_t i = 0; i < tools->size(); ++i) {
    auto declared = declaration((*tools)[i], "tools[" + std::to_string(i) + "]");
    if (!declared) return tl::unexpected(declared.error());
    declarations.push_back(std::move(*declared));
  }
  tl::expected<Json, TranslateError> config = Json();
  if (const Json* choice = member(request, "tool_choice")) config = calling_config(*choice);
  if (!config) return tl::unexpected(config.error());
  if (declarations.empty()) return {};
  Json tool = {{"functionDeclarations", std::move(declarations)}};
  body["tools"] = Json::array({std::move(tool)});
  if (!config->is_null()) body["toolConfig"] = {{"functionCallingConfig", std::move(*config)}};
  return {};
}

}  // namespace rolter::gemini
