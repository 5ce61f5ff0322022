// See mapping.h.
#include "translate/anthropic/mapping.h"

namespace rolter::anthropic {

const char* chat_finish_reason(std::string_view stop_reason) {
  if (stop_reason == "max_tokens" || stop_reason == "model_context_window_exceeded")
    return "length";
  if (stop_reason == "tool_use") return "tool_calls";
  if (stop_reason == "refusal") return "content_filter";
  return "stop";
}

const char* messages_stop_reason(std::string_view finish_reason) {
  if (finish_reason == "length") return "max_tokens";
  if (finish_reason == "tool_calls" || finish_reason == "function_call") return "tool_use";
  if (finish_reason == "content_filter") return "refusal";
  return "end_turn";
}

void MessagesUsage::update(const Json& usage) {
  auto take = [&](const char* key, uint64_t& field) {
    if (const Json* value = member(usage, key)) field = to_u64(*value).value_or(field);
  };
  take("input_tokens", input_tokens);
  take("output_tokens", output_tokens);
  take("cache_read_input_tokens", cache_read);
  take("cache_creation_input_tokens", cache_creation);
}

StreamTranslator::Usage MessagesUsage::total() const {
  return {.input_tokens = input_tokens + cache_read + cache_creation,
          .output_tokens = output_tokens,
          .cached_tokens = cache_read};
}

StreamTranslator::Usage chat_usage(const Json& usage) {
  StreamTranslator::Usage out{.input_tokens = u64_member(usage, "prompt_tokens"),
                              .output_tokens = u64_member(usage, "completion_tokens"),
                              .cached_tokens = 0};
  if (const Json* details = member(usage, "prompt_tokens_details")) {
    out.cached_tokens = std::min(u64_member(*details, "cached_tokens"), out.input_tokens);
  }
  return out;
}

Json chat_usage_json(const StreamTranslator::Usage& usage) {
  return Json{{"prompt_tokens", usage.input_tokens},
              {"completion_tokens", usage.output_tokens},
              {"total_tokens", usage.input_tokens + usage.output_tokens},
              {"prompt_tokens_details", {{"cached_tokens", usage.cached_tokens}}}};
}

Json messages_usage_json(const StreamTranslator::Usage& usage) {
  return Json{{"input_tokens", usage.input_tokens - usage.cached_tokens},
              {"output_tokens", usage.output_tokens},
              {"cache_read_input_tokens", usage.cached_tokens},
              {"cache_creation_input_tokens", 0}};
}

}  // namespace rolter::anthropic
