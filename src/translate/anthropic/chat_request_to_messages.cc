// A chat-completions request body → an Anthropic Messages request (SPEC §16). The conversation is
// chat_conversation_to_messages.cc's job; this file maps the other fields and refuses what has
// no equivalent, naming the field (400), never dropping it silently.
#include <string>

#include "translate/anthropic/conversation.h"
#include "translate/anthropic/steps.h"

namespace rolter::anthropic {

namespace {

using Result = tl::expected<void, TranslateError>;

TranslateError untranslatable(const std::string& field) {
  return bad_field(field, field + " cannot be translated to Anthropic Messages");
}

bool is_zero(const Json& v) { return v.is_number() && v.get<double>() == 0; }

// Fields accepted when they ask for nothing Anthropic would do differently, refused otherwise.
// Ignored outright: stream_options (the usage chunk is always sent), seed (best effort even at
// OpenAI, so no answer depended on it), store and metadata (OpenAI's stored-completions
// bookkeeping), service_tier (OpenAI billing), prediction (a latency hint; the answer is the
// same), parallel_tool_calls true (Anthropic's default).
Result check_harmless(const std::string& key, const Json& v) {
  static const char* const kIgnored[] = {"stream_options", "seed",         "store",
                                         "metadata",       "service_tier", "prediction"};
  for (const char* ignored : kIgnored) {
    if (key == ignored) return {};
  }
  bool harmless = false;
  if (key == "n")
    harmless = to_u64(v) == 1u;
  else if (key == "logprobs")
    harmless = v.is_boolean() && !v.get<bool>();
  else if (key == "top_logprobs" || key == "presence_penalty" || key == "frequency_penalty")
    harmless = is_zero(v);
  else if (key == "logit_bias")
    harmless = v.is_object() && v.empty();
  else if (key == "response_format")
    harmless = string_member(v, "type") && *string_member(v, "type") == "text";
  else if (key == "modalities")
    harmless = v.is_array() && v.size() == 1 && v[0] == "text";
  if (harmless) return {};
  return tl::unexpected(untranslatable(key));
}

Result set_max_tokens(const Json& body, const TranslateOptions& options, Json& out) {
  const char* key = member(body, "max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
  const Json* value = member(body, key);
  if (value == nullptr) {
    out["max_tokens"] = options.default_max_tokens;
    return {};
  }
  const auto count = to_u64(*value);
  if (!count || *count == 0)
    return tl::unexpected(bad_field(key, std::string(key) + " must be a positive integer"));
  out["max_tokens"] = *count;
  return {};
}

Result set_stop(const Json& stop, Json& out) {
  if (stop.is_string()) {
    out["stop_sequences"] = Json::array({stop});
    return {};
  }
  bool strings = stop.is_array();
  for (const auto& s : stop) strings = strings && s.is_string();
  if (!strings)
    return tl::unexpected(bad_field("stop", "stop must be a string or an array of strings"));
  if (!stop.empty()) out["stop_sequences"] = stop;
  return {};
}

Result set_tools(const Json& tools, Json& out) {
  if (!tools.is_array()) return tl::unexpected(bad_field("tools", "tools must be an array"));
  Json translated = Json::array();
  for (size_t i = 0; i < tools.size(); ++i) {
    const std::string path = at("tools", i);
    const std::string* type = string_member(tools[i], "type");
    if (type == nullptr || *type != "function")
      return tl::unexpected(untranslatable(path + ".type"));
    const Json* function = member(tools[i], "function");
    const std::string* name = function ? string_member(*function, "name") : nullptr;
    if (name == nullptr)
      return tl::unexpected(
          bad_field(path + ".function.name", path + ".function.name must be a string"));
    Json tool{{"name", *name}};
    if (const std::string* description = string_member(*function, "description"))
      tool["description"] = *description;
    const Json* parameters = member(*function, "parameters");
    if (parameters != nullptr && !parameters->is_object())
      return tl::unexpected(bad_field(path + ".function.parameters",
                                      path + ".function.parameters must be an object"));
    tool["input_schema"] = parameters ? *parameters : Json{{"type", "object"}};
    translated.push_back(std::move(tool));
  }
  if (!translated.empty()) out["tools"] = std::move(translated);
  return {};
}

// tool_choice auto/none/required/named → auto/none/any/tool; parallel_tool_calls false rides on
// it as disable_parallel_tool_use (which Anthropic's "none" does not take).
Result set_tool_choice(const Json* choice, const Json* parallel, Json& out) {
  Json translated;
  if (choice == nullptr) {
    translated = Json{{"type", "auto"}};
  } else if (choice->is_string() && (*choice == "auto" || *choice == "none")) {
    translated = Json{{"type", *choice}};
  } else if (choice->is_string() && *choice == "required") {
    translated = Json{{"type", "any"}};
  } else {
    const Json* function = member(*choice, "function");
    const std::string* name = function ? string_member(*function, "name") : nullptr;
    const std::string* type = string_member(*choice, "type");
    if (type == nullptr || *type != "function" || name == nullptr)
      return tl::unexpected(untranslatable("tool_choice"));
    translated = Json{{"type", "tool"}, {"name", *name}};
  }
  if (parallel != nullptr && !parallel->is_boolean())
    return tl::unexpected(
        bad_field("parallel_tool_calls", "parallel_tool_calls must be a boolean"));
  const bool serial = parallel != nullptr && !parallel->get<bool>();
  if (serial && translated["type"] != "none") translated["disable_parallel_tool_use"] = true;
  if (choice != nullptr || serial) out["tool_choice"] = std::move(translated);
  return {};
}

Result set_number(const Json& body, const char* key, Json& out) {
  const Json* value = member(body, key);
  if (value == nullptr) return {};
  if (!value->is_number())
    return tl::unexpected(bad_field(key, std::string(key) + " must be a number"));
  out[key] = *value;
  return {};
}

Result set_field(const Json& body, const std::string& key, const Json& v, Json& out) {
  if (key == "model" || key == "messages" || key == "max_tokens" ||
      key == "max_completion_tokens" || key == "tool_choice" || key == "parallel_tool_calls") {
    return {};  // handled with their partners
  }
  // top_k is no OpenAI field, but vLLM and SGLang accept it, and Anthropic has it.
  if (key == "temperature" || key == "top_p" || key == "top_k")
    return set_number(body, key.c_str(), out);
  if (key == "stop") return set_stop(v, out);
  if (key == "tools") return set_tools(v, out);
  if (key == "user") {
    if (!v.is_string()) return tl::unexpected(bad_field("user", "user must be a string"));
    out["metadata"] = Json{{"user_id", v}};
    return {};
  }
  if (key == "stream") {
    if (!v.is_boolean()) return tl::unexpected(bad_field("stream", "stream must be a boolean"));
    if (v.get<bool>()) out["stream"] = true;
    return {};
  }
  return check_harmless(key, v);
}

}  // namespace

tl::expected<TranslatedRequest, TranslateError> chat_request_to_messages(
    std::string_view text, const TranslateOptions& options) {
  Json body;
  if (!parse_json(text, body) || !body.is_object())
    return tl::unexpected(bad_field("", "the request body must be a JSON object"));
  const Json* messages = member(body, "messages");
  if (messages == nullptr) return tl::unexpected(bad_field("messages", "messages is required"));
  auto conversation = chat_conversation_to_messages(*messages);
  if (!conversation) return tl::unexpected(conversation.error());

  Json out{{"model", options.model}};
  if (!conversation->system.is_null()) out["system"] = std::move(conversation->system);
  out["messages"] = std::move(conversation->messages);
  if (auto set = set_max_tokens(body, options, out); !set) return tl::unexpected(set.error());
  for (const auto& [key, value] : body.items()) {
    if (value.is_null()) continue;  // an explicit null asks for the default
    if (auto set = set_field(body, key, value, out); !set) return tl::unexpected(set.error());
  }
  if (auto set =
          set_tool_choice(member(body, "tool_choice"), member(body, "parallel_tool_calls"), out);
      !set) {
    return tl::unexpected(set.error());
  }
  TranslatedRequest request;
  request.path = "/v1/messages";
  request.stream = out.contains("stream");
  request.body = dump_json(out);
  return request;
}

}  // namespace rolter::anthropic
