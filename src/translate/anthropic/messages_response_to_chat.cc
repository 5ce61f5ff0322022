// An Anthropic Messages answer → a chat.completion (SPEC §16).
//
// The id is Anthropic's own ("msg_..."), so a log line matches the upstream's. Anthropic sends no
// timestamp: `created` is the caller's (TranslateOptions::created), as translation reads no clock. Thinking blocks are left out (this direction never
// enables thinking, and a chat message has no place for them); any other block type is a 502.
#include "translate/anthropic/mapping.h"
#include "translate/anthropic/steps.h"

namespace rolter::anthropic {

namespace {

struct ChatMessage {
  std::string text;
  Json tool_calls = Json::array();
};

tl::expected<ChatMessage, TranslateError> read_content(const Json& content) {
  ChatMessage out;
  for (size_t i = 0; i < content.size(); ++i) {
    const Json& block = content[i];
    const std::string* type = string_member(block, "type");
    const std::string path = at("content", i);
    if (type != nullptr && *type == "text") {
      const std::string* text = string_member(block, "text");
      if (text == nullptr)
        return tl::unexpected(bad_upstream("Anthropic answered " + path + " without text"));
      out.text += *text;
    } else if (type != nullptr && *type == "tool_use") {
      const std::string* id = string_member(block, "id");
      const std::string* name = string_member(block, "name");
      const Json* input = member(block, "input");
      if (id == nullptr || name == nullptr)
        return tl::unexpected(bad_upstream("Anthropic answered " + path + " without id or name"));
      Json function{{"name", *name}, {"arguments", input ? dump_json(*input) : "{}"}};
      out.tool_calls.push_back(
          Json{{"id", *id}, {"type", "function"}, {"function", std::move(function)}});
    } else if (type == nullptr || (*type != "thinking" && *type != "redacted_thinking")) {
      return tl::unexpected(bad_upstream(
          "Anthropic answered a content block chat completions cannot carry (" + path + ")"));
    }
  }
  return out;
}

}  // namespace

tl::expected<std::string, TranslateError> messages_response_to_chat(
    std::string_view text, const TranslateOptions& options) {
  Json body;
  if (!parse_json(text, body) || !body.is_object())
    return tl::unexpected(bad_upstream("Anthropic's answer is not a JSON object"));
  const Json* content = member(body, "content");
  if (content == nullptr || !content->is_array())
    return tl::unexpected(bad_upstream("Anthropic's answer has no content array"));
  auto read = read_content(*content);
  if (!read) return tl::unexpected(read.error());

  Json message{{"role", "assistant"}};
  // content is null when the turn only calls tools, as OpenAI sends it.
  if (read->text.empty() && !read->tool_calls.empty())
    message["content"] = nullptr;
  else
    message["content"] = std::move(read->text);
  if (!read->tool_calls.empty()) message["tool_calls"] = std::move(read->tool_calls);

  const std::string* stop_reason = string_member(body, "stop_reason");
  MessagesUsage usage;
  if (const Json* u = member(body, "usage")) usage.update(*u);
  const std::string* id = string_member(body, "id");
  const std::string* model = string_member(body, "model");
  Json out{
      {"id", id ? *id : std::string("chatcmpl-anthropic")},
      {"object", "chat.completion"},
      {"created", options.created},
      {"model", model ? *model : options.model},
      {"choices",
       Json::array({Json{{"index", 0},
                         {"message", std::move(message)},
                         {"logprobs", nullptr},
                         {"finish_reason", chat_finish_reason(stop_reason ? *stop_reason : "")}}})},
      {"usage", chat_usage_json(usage.total())}};
  return dump_json(out);
}

}  // namespace rolter::anthropic
