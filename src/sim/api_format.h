// Rendering of simulated responses in each API's wire shape: whole JSON bodies, Server-Sent
// Events for streams (OpenAI chat/completions chunks ending in `data: [DONE]`, Responses API
// `response.*` events, Anthropic `message_*`/`content_block_*` events, Gemini
// GenerateContentResponse chunks via gemini_format.h) and error bodies.
//
// A tool call (Completion::tool_call) renders in each API's shape: OpenAI chat
// message.tool_calls / streamed tool_calls deltas (the first with id, type, name and arguments "",
// then one per argument fragment) and finish_reason "tool_calls"; Anthropic a tool_use block /
// content_block_start tool_use, input_json_delta fragments, content_block_stop, stop_reason
// "tool_use"; Gemini a functionCall part (gemini_format.h).
//
// Anthropic usage follows Anthropic's meaning: input_tokens counts the prompt tokens that were
// not read from the cache, cache_read_input_tokens those that were (the engine's prefix-cache
// hit), cache_creation_input_tokens is 0 (the sim has no explicit cache_control writes).
//
// Every SSE string returned is one complete event including its blank-line terminator, so the
// server can write each as its own chunk.
//
// Thread-safety: pure functions over values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/api_request.h"
#include "sim/tool_calls.h"

namespace rolter::sim {

// One generated answer, everything the renderers need.
struct Completion {
  ApiKind api = ApiKind::kChat;
  std::string id;  // "chatcmpl-…", "cmpl-…", "resp_…" or "msg_…"
  std::string model;
  int64_t created = 0;  // unix seconds
  size_t prompt_tokens = 0;
  size_t cached_tokens = 0;
  // The output pieces of each choice, in the order of its `index` (chat/completions: prompt p's
  // choice j is p * n + j; Responses and Messages have one). Concatenated, a choice's pieces are
  // its text. The engine model paces all choices as one sequence of the longest one's length; a
  // choice cut short by a stop sequence simply ends earlier.
  std::vector<std::vector<std::string>> choices;
  // Per choice: the stop sequence that ended it (stop_sequences.h), "" when none did. May be
  // shorter than `choices` (missing = "").
  std::vector<std::string> stop_hits;
  // When set, the answer is this one tool call and choices == {its argument fragments}
  // (tool_calls.h's split_arguments).
  std::optional<ToolCall> tool_call;
  // The client's max-tokens field ended the output: finish_reason "length", stop_reason
  // "max_tokens", Responses status "incomplete".
  bool hit_max_tokens = false;
  bool include_usage = false;  // chat/completions streams: send the usage chunk

  // Output tokens of the longest choice: the model sequence's length.
  size_t length() const;
  // Output tokens over all choices, as usage counts them.
  size_t completion_tokens() const;
  std::string text(size_t choice = 0) const;
  // The stop sequence that ended `choice`, "" when none.
  const std::string& stop_hit(size_t choice = 0) const;
  // Why `choice` ended, in OpenAI's words: "tool_calls", "stop" (a stop sequence or the end of
  // the text) or "length" (the client's max tokens).
  const char* finish_reason(size_t choice = 0) const;
};

// The non-streaming response body.
std::string render_response(const Completion& c);

// Stream events sent just before the first token (Responses and Messages framing; none for
// chat/completions, whose first token chunk carries the role).
std::vector<std::string> render_stream_prologue(const Completion& c);
// The event carrying output token `index` of choice `choice`.
std::string render_stream_token(const Completion& c, size_t choice, size_t index);
// Events after the last token: a finish chunk per choice, usage and `[DONE]` (or the API's
// equivalent; Responses ends in response.incomplete when hit_max_tokens, else response.completed).
std::vector<std::string> render_stream_epilogue(const Completion& c);

struct Embedding {
  std::vector<float> vector;
};
// The embeddings list; each vector an array of numbers, or a base64 string of its little-endian
// float32 bytes (float_base64.h).
std::string render_embeddings(std::string_view model, const std::vector<Embedding>& data,
                              size_t prompt_tokens, EmbeddingEncoding encoding);

enum class ErrorShape { kOpenAI, kAnthropic, kGemini };
ErrorShape error_shape(ApiKind api);

// An error body: OpenAI {"error":{message,type,param,code}}, Anthropic
// {"type":"error","error":{type,message}}, or Gemini {"error":{code,message,status}}. The type
// (or status) follows the HTTP status.
std::string render_error(ErrorShape shape, int status, std::string_view message);
// The same, OpenAI's shape or (when `anthropic`) Anthropic's.
std::string render_error(bool anthropic, int status, std::string_view message);

// The 400 an engine answers a prompt of `requested` tokens that exceeds its `max_len`, worded as
// the real server words it: vLLM {"object":"error","message":"This model's maximum context
// length is N tokens. However, you requested M tokens in the messages, Please reduce the length
// of the messages.","type":"BadRequestError","param":null,"code":400}; Anthropic
// invalid_request_error "prompt is too long: M tokens > N maximum"; Gemini INVALID_ARGUMENT
// "The input token count (M) exceeds the maximum number of tokens allowed (N).".
std::string render_context_length_error(ErrorShape shape, size_t max_len, size_t requested);

}  // namespace rolter::sim
