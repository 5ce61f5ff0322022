// A chat.completion → an Anthropic Messages answer (SPEC §16), the inverse of
// messages_response_to_chat.cc.
//
// The id becomes "msg_<upstream id>" (Anthropic clients expect the prefix; the upstream id stays
// findable). Which stop sequence ended the answer is unknown to chat completions, so "stop" is
// always end_turn. Tool-call arguments that are not a JSON object are a 502: Anthropic's `input`
// must be an object, and replacing the model's arguments with {} would run a tool with
// arguments nobody wrote. A refusal with no content becomes the text. reasoning_content (vLLM's
// reasoning parser) is left out: this direction refuses `thinking`, so the client asked for none.
#include "translate/anthropic/mapping.h"
#include "translate/anthropic/steps.h"

namespace rolter::anthropic {

namespace {

// The message's text: a string, or text parts joined (some servers answer with parts).
std::string message_text(const Json& message) {
  std::string text;
  const Json* content = member(message, "content");
  if (content != nullptr && content->is_string()) {
    text = content->get_ref<const std::string&>();
  } else if (content != nullptr && content->is_array()) {
    for (const auto& part : *content) {
      if (const std::string* t = string_member(part, "text")) text += *t;
    }
  }
  const std::string* refusal = string_member(message, "refusal");
  if (text.empty() && refusal != nullptr) text = *refusal;
  return text;
}

tl::expected<void, TranslateError> add_tool_uses(const Json& message, Json& content) {
  const Json* calls = member(message, "tool_calls");
  if (calls == nullptr) return {};
  if (!calls->is_array())
    return tl::unexpected(bad_upstream("the upstream's tool_calls is not an array"));
  for (size_t i = 0; i < calls->size(); ++i) {
    const Json& call = (*calls)[i];
    const std::string path = at("choices[0].message.tool_calls", i);
    const Json* function = member(call, "function");
    const std::string* id = string_member(call, "id");
    const std::string* name = function ? string_member(*function, "name") : nullptr;
    const std::string* arguments = function ? string_member(*function, "arguments") : nullptr;
    if (id == nullptr || name == nullptr)
      return tl::unexpected(bad_upstream("the upstream's " + path + " has no id or name"));
    Json input = Json::object();
    if (arguments != nullptr && arguments->find_first_not_of(" \t\r\n") != std::string::npos &&
        (!parse_json(*arguments, input) || !input.is_object())) {
      return tl::unexpected(
          bad_upstream("the upstream's " + path + ".function.arguments is not a JSON object"));
    }
    content.push_back(
        Json{{"type", "tool_use"}, {"id", *id}, {"name", *name}, {"input", std::move(input)}});
  }
  return {};
}

// The choice with index 0 (this direction never asks for n > 1).
const Json* first_choice(const Json& body) {
  const Json* choices = member(body, "choices");
  if (choices == nullptr || !choices->is_array()) return nullptr;
  for (const auto& choice : *choices) {
    const Json* index = member(choice, "index");
    if (index == nullptr || to_u64(*index) == 0u) return &choice;
  }
  return nullptr;
}

}  // namespace

tl::expected<std::string, TranslateError> chat_response_to_messages(
    std::string_view text, const TranslateOptions& options) {
  Json body;
  if (!parse_json(text, body) || !body.is_object())
    return tl::unexpected(bad_upstream("the upstream's answer is not a JSON object"));
  const Json* choice = first_choice(body);
  const Json* message = choice ? member(*choice, "message") : nullptr;
  if (message == nullptr || !message->is_object())
    return tl::unexpected(bad_upstream("the upstream's answer has no choices[0].message"));

  Json content = Json::array();
  const std::string answer = message_text(*message);
  if (!answer.empty()) content.push_back(Json{{"type", "text"}, {"text", answer}});
  if (auto added = add_tool_uses(*message, content); !added) return tl::unexpected(added.error());

  const std::string* finish = string_member(*choice, "finish_reason");
  const std::string* id = string_member(body, "id");
  const std::string* model = string_member(body, "model");
  StreamTranslator::Usage usage;
  if (const Json* u = member(body, "usage")) usage = chat_usage(*u);
  Json out{{"id", "msg_" + (id ? *id : std::string("upstream"))},
           {"type", "message"},
           {"role", "assistant"},
           {"model", model ? *model : options.model},
           {"content", std::move(content)},
           {"stop_reason", messages_stop_reason(finish ? *finish : "")},
           {"stop_sequence", nullptr},
           {"usage", messages_usage_json(usage)}};
  return dump_json(out);
}

}  // namespace rolter::anthropic
