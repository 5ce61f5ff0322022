// An Anthropic Messages request body → a chat-completions request (SPEC §16), the inverse of
// chat_request_to_messages.cc. The conversation is messages_conversation_to_chat.cc's job.
//
// A stream asks for stream_options.include_usage, so the usage reaches message_delta. top_k is
// passed through: no OpenAI field, but vLLM and SGLang, the usual targets, accept it. Ignored:
// service_tier (Anthropic capacity selection, nothing to select here), thinking of type
// "disabled" (the default). Everything else without an equivalent is a 400 naming it.
#include <string>

#include "translate/anthropic/conversation.h"
#include "translate/anthropic/steps.h"

namespace rolter::anthropic {

namespace {

using Result = tl::expected<void, TranslateError>;

TranslateError untranslatable(const std::string& field) {
  return bad_field(field, field + " cannot be translated to chat completions");
}

Result set_tools(const Json& tools, Json& out) {
  if (!tools.is_array()) return tl::unexpected(bad_field("tools", "tools must be an array"));
  Json translated = Json::array();
  for (size_t i = 0; i < tools.size(); ++i) {
    const std::string path = at("tools", i);
    const std::string* type = string_member(tools[i], "type");
    // Typed tools (bash_20250124, web_search_...) run on Anthropic's side; only custom ones map.
    if (type != nullptr && *type != "custom") return tl::unexpected(untranslatable(path + ".type"));
    const std::string* name = string_member(tools[i], "name");
    if (name == nullptr)
      return tl::unexpected(bad_field(path + ".name", path + ".name must be a string"));
    Json function{{"name", *name}};
    if (const std::string* description = string_member(tools[i], "description"))
      function["description"] = *description;
    const Json* schema = member(tools[i], "input_schema");
    function["parameters"] = schema ? *schema : Json{{"type", "object"}};
    translated.push_back(Json{{"type", "function"}, {"function", std::move(function)}});
  }
  if (!translated.empty()) out["tools"] = std::move(translated);
  return {};
}

// auto/any/tool/none → "auto"/"required"/named/"none"; disable_parallel_tool_use →
// parallel_tool_calls false.
Result set_tool_choice(const Json& choice, Json& out) {
  const std::string* type = string_member(choice, "type");
  if (type == nullptr)
    return tl::unexpected(bad_field("tool_choice", "tool_choice.type must be a string"));
  if (*type == "auto" || *type == "none") {
    out["tool_choice"] = *type;
  } else if (*type == "any") {
    out["tool_choice"] = "required";
  } else if (*type == "tool" && string_member(choice, "name")) {
    out["tool_choice"] =
        Json{{"type", "function"}, {"function", {{"name", *string_member(choice, "name")}}}};
  } else {
    return tl::unexpected(untranslatable("tool_choice"));
  }
  const Json* serial = member(choice, "disable_parallel_tool_use");
  if (serial != nullptr && serial->is_boolean() && serial->get<bool>())
    out["parallel_tool_calls"] = false;
  return {};
}

Result set_number(const std::string& key, const Json& v, Json& out) {
  if (!v.is_number()) return tl::unexpected(bad_field(key, key + " must be a number"));
  out[key] = v;
  return {};
}

Result set_field(const std::string& key, const Json& v, Json& out) {
  if (key == "model" || key == "messages" || key == "system" || key == "service_tier") return {};
  if (key == "temperature" || key == "top_p" || key == "top_k" || key == "max_tokens")
    return set_number(key, v, out);
  if (key == "tools") return set_tools(v, out);
  if (key == "tool_choice") return set_tool_choice(v, out);
  if (key == "stop_sequences") {
    bool strings = v.is_array();
    for (const auto& s : v) strings = strings && s.is_string();
    if (!strings)
      return tl::unexpected(bad_field(key, "stop_sequences must be an array of strings"));
    if (!v.empty()) out["stop"] = v;
    return {};
  }
  if (key == "metadata") {
    if (!v.is_object()) return tl::unexpected(bad_field(key, "metadata must be an object"));
    if (const std::string* user = string_member(v, "user_id")) out["user"] = *user;
    return {};
  }
  if (key == "stream") {
    if (!v.is_boolean()) return tl::unexpected(bad_field(key, "stream must be a boolean"));
    if (v.get<bool>()) {
      out["stream"] = true;
      out["stream_options"] = Json{{"include_usage", true}};
    }
    return {};
  }
  if (key == "thinking" && string_member(v, "type") && *string_member(v, "type") == "disabled")
    return {};
  return tl::unexpected(untranslatable(key));
}

}  // namespace

tl::expected<TranslatedRequest, TranslateError> messages_request_to_chat(
    std::string_view text, const TranslateOptions& options) {
  Json body;
  if (!parse_json(text, body) || !body.is_object())
    return tl::unexpected(bad_field("", "the request body must be a JSON object"));
  const Json* messages = member(body, "messages");
  if (messages == nullptr) return tl::unexpected(bad_field("messages", "messages is required"));
  auto conversation = messages_conversation_to_chat(member(body, "system"), *messages);
  if (!conversation) return tl::unexpected(conversation.error());

  Json out{{"model", options.model}, {"messages", std::move(*conversation)}};
  for (const auto& [key, value] : body.items()) {
    if (value.is_null()) continue;  // an explicit null asks for the default
    if (auto set = set_field(key, value, out); !set) return tl::unexpected(set.error());
  }
  TranslatedRequest request;
  request.path = "/v1/chat/completions";
  request.stream = out.contains("stream");
  request.body = dump_json(out);
  return request;
}

}  // namespace rolter::anthropic
