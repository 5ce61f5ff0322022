// The small vocabularies both directions share: stop reasons and usage counts (SPEC §16).
//
// Usage rule: Anthropic's input_tokens excludes cached tokens, OpenAI's prompt_tokens includes
// them. So prompt_tokens = input_tokens + cache_read_input_tokens + cache_creation_input_tokens,
// cached_tokens = cache_read_input_tokens; and back, input_tokens = prompt_tokens - cached_tokens,
// cache_read_input_tokens = cached_tokens (chat completions has no cache-write count: 0).
// StreamTranslator::Usage means the same in both directions: input_tokens is every prompt token,
// cached ones included, and cached_tokens the cached part of them.
//
// Thread-safety: pure functions; a MessagesUsage belongs to one exchange.
#pragma once

#include <string_view>

#include "translate/anthropic/json_util.h"

namespace rolter::anthropic {

// Anthropic stop_reason → chat finish_reason: end_turn/stop_sequence → stop, max_tokens → length,
// tool_use → tool_calls, refusal → content_filter; anything else (pause_turn) → stop.
const char* chat_finish_reason(std::string_view stop_reason);
// The inverse: stop → end_turn (which stop sequence matched is unknown), length → max_tokens,
// tool_calls/function_call → tool_use, content_filter → refusal; anything else → end_turn.
const char* messages_stop_reason(std::string_view finish_reason);

// An Anthropic error type as the OpenAI one ("overloaded_error" → "service_unavailable");
// "server_error" when unknown. Defined in error_mapping.cc with the rest of the error table.
const char* chat_error_type(std::string_view anthropic_type);

// Anthropic usage counts, updated field by field: message_start carries the input side and
// message_delta the (cumulative) output, sometimes the input again.
struct MessagesUsage {
  uint64_t input_tokens = 0;
  uint64_t output_tokens = 0;
  uint64_t cache_read = 0;
  uint64_t cache_creation = 0;

  void update(const Json& usage);  // overwrites the counts `usage` holds
  StreamTranslator::Usage total() const;
};

// A chat `usage` object (prompt_tokens_details.cached_tokens included) as Usage.
StreamTranslator::Usage chat_usage(const Json& usage);

// Usage as a chat `usage` object, and as an Anthropic one.
Json chat_usage_json(const StreamTranslator::Usage& usage);
Json messages_usage_json(const StreamTranslator::Usage& usage);

}  // namespace rolter::anthropic
