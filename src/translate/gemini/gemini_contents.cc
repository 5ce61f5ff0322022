// Chat messages as Gemini contents and systemInstruction.
//
//   system, developer → systemInstruction.parts (wherever they stand: Gemini has one instruction)
//   user              → a "user" turn; assistant → a "model" turn (tool_calls → functionCall)
//   tool              → a functionResponse part in a "user" turn, named by looking the
//                       tool_call_id up among the earlier assistant tool calls
// Neighbouring turns of the same role merge into one: Gemini wants all the responses to one
// model turn's calls in the single turn after it.
//
// A tool's text becomes the functionResponse's response: the text itself when it is a JSON
// object (Gemini then reads the whole object as the output, or its "error" key as a failure),
// otherwise {"output": text}, the key Gemini's reference names for a function's output.
#include <unordered_map>

#include "translate/gemini/gemini_request_parts.h"

namespace rolter::gemini {
namespace {

using CallNames = std::unordered_map<std::string, std::string>;  // tool call id → function name

void append_turn(Json& contents, const char* role, Json parts) {
  if (parts.empty()) return;
  if (!contents.empty() && contents.back()["role"] == role) {
    for (auto& part : parts) contents.back()["parts"].push_back(std::move(part));
    return;
  }
  contents.push_back({{"role", role}, {"parts", std::move(parts)}});
}

tl::expected<Json, TranslateError> content_parts(const Json& message, const std::string& where) {
  Json parts = Json::array();
  const Json* content = member(message, "content");
  if (content == nullptr) return parts;
  if (const auto* text = content->get_ptr<const std::string*>()) {
    if (!text->empty()) parts.push_back({{"text", *text}});
    return parts;
  }
  if (!content->is_array())
    return tl::unexpected(
        bad_request(where + ".content", where + ".content must be a string or an array"));
  for (size_t i = 0; i < content->size(); ++i) {
    auto part = content_part((*content)[i], where + ".content[" + std::to_string(i) + "]");
    if (!part) return tl::unexpected(part.error());
    if (!part->is_null()) parts.push_back(std::move(*part));
  }
  return parts;
}

tl::expected<Json, TranslateError> function_call_part(const Json& call, const std::string& where,
                                                      CallNames& names) {
  const Json* function = object_member(call, "function");
  const std::string* name = function ? string_member(*function, "name") : nullptr;
  if (name == nullptr)
    return tl::unexpected(
        bad_request(where + ".function.name", where + ".function.name must be a string"));
  Json args = Json::object();
  const std::string* arguments = string_member(*function, "arguments");
  if (arguments != nullptr && arguments->find_first_not_of(" \t\r\n") != std::string::npos) {
    auto parsed = parse_json(*arguments);
    if (!parsed || !parsed->is_object()) {
      return tl::unexpected(bad_request(where + ".function.arguments",
                                        where + ".function.arguments must be a JSON object"));
    }
    args = std::move(*parsed);
  }
  if (const std::string* id = string_member(call, "id")) names[*id] = *name;
  return Json{{"functionCall", {{"name", *name}, {"args", std::move(args)}}}};
}

tl::expected<Json, TranslateError> model_parts(const Json& message, const std::string& where,
                                               CallNames& names) {
  for (const char* legacy : {"function_call", "audio"}) {
    if (member(message, legacy) != nullptr) {
      return tl::unexpected(bad_request(where + "." + legacy,
                                        where + "." + legacy + " cannot be translated to Gemini"));
    }
  }
  auto parts = content_parts(message, where);
  if (!parts) return parts;
  const Json* calls = member(message, "tool_calls");
  if (calls == nullptr) return parts;
  if (!calls->is_array())
    return tl::unexpected(
        bad_request(where + ".tool_calls", where + ".tool_calls must be an array"));
  for (size_t i = 0; i < calls->size(); ++i) {
    auto part =
        function_call_part((*calls)[i], where + ".tool_calls[" + std::to_string(i) + "]", names);
    if (!part) return tl::unexpected(part.error());
    parts->push_back(std::move(*part));
  }
  return parts;
}

tl::expected<Json, TranslateError> tool_result_part(const Json& message, const std::string& where,
                                                    const CallNames& names) {
  const std::string* id = string_member(message, "tool_call_id");
  const auto found = id ? names.find(*id) : names.end();
  if (found == names.end()) {
    return tl::unexpected(
        bad_request(where + ".tool_call_id",
                    where + ".tool_call_id does not name an earlier assistant tool call"));
  }
  const Json* content = member(message, "content");
  auto text = content_text(content ? *content : Json(), where + ".content");
  if (!text) return tl::unexpected(text.error());
  auto parsed = parse_json(*text);
  Json response = parsed && parsed->is_object() ? std::move(*parsed) : Json{{"output", *text}};
  Json function_response = {{"name", found->second}, {"response", std::move(response)}};
  Json parts = Json::array();
  parts.push_back({{"functionResponse", std::move(function_response)}});
  return parts;
}

Status add_system(const Json& message, const std::string& where, Json& system_parts) {
  const Json* content = member(message, "content");
  if (content != nullptr && content->is_array()) {
    // Several text parts stay several parts.
    for (size_t i = 0; i < content->size(); ++i) {
      const std::string at = where + ".content[" + std::to_string(i) + "]";
      const std::string* type = string_member((*content)[i], "type");
      const std::string* text = string_member((*content)[i], "text");
      if (type == nullptr || *type != "text" || text == nullptr) {
        return tl::unexpected(bad_request(at, at + " must be a text part"));
      }
      if (!text->empty()) system_parts.push_back({{"text", *text}});
    }
    return {};
  }
  auto text = content_text(content ? *content : Json(), where + ".content");
  if (!text) return tl::unexpected(text.error());
  if (!text->empty()) system_parts.push_back({{"text", *text}});
  return {};
}

}  // namespace

Status add_contents(const Json& messages, Json& body) {
  Json contents = Json::array();
  Json system_parts = Json::array();
  CallNames names;
  for (size_t i = 0; i < messages.size(); ++i) {
    const Json& message = messages[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    const std::string* role = string_member(message, "role");
    if (role == nullptr)
      return tl::unexpected(bad_request(where + ".role", where + ".role must be a string"));
    if (*role == "system" || *role == "developer") {
      if (auto ok = add_system(message, where, system_parts); !ok) return ok;
      continue;
    }
    tl::expected<Json, TranslateError> parts;
    const char* gemini_role = "user";
    if (*role == "user") {
      parts = content_parts(message, where);
    } else if (*role == "assistant") {
      parts = model_parts(message, where, names);
      gemini_role = "model";
    } else if (*role == "tool") {
      parts = tool_result_part(message, where, names);
    } else {
      return tl::unexpected(
          bad_request(where + ".role", "role \"" + *role + "\" cannot be translated to Gemini"));
    }
    if (!parts) return tl::unexpected(parts.error());
    append_turn(contents, gemini_role, std::move(*parts));
  }
  if (contents.empty())
    return tl::unexpected(
        bad_request("messages", "messages holds no user, assistant or tool content to send"));
  body["contents"] = std::move(contents);
  if (!system_parts.empty()) body["systemInstruction"] = {{"parts", std::move(system_parts)}};
  return {};
}

}  // namespace rolter::gemini
