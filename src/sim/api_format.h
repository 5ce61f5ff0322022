// Rendering of simulated responses in each API's wire shape: whole JSON bodies, Server-Sent
// Events for streams (OpenAI chat/completions chunks ending in `data: [DONE]`, Responses API
// `response.*` events, Anthropic `message_*`/`content_block_*` events) and error bodies.
//
// Every SSE string returned is one complete event including its blank-line terminator, so the
// server can write each as its own chunk.
//
// Thread-safety: pure functions over values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/api_request.h"

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
  // its text. Every choice has the same length: the engine model paces them as one sequence.
  std::vector<std::vector<std::string>> choices;
  // The client's max-tokens field ended the output: finish_reason "length", stop_reason
  // "max_tokens", Responses status "incomplete".
  bool hit_max_tokens = false;
  bool include_usage = false;  // chat/completions streams: send the usage chunk

  // Output tokens of each choice.
  size_t length() const { return choices.empty() ? 0 : choices.front().size(); }
  // Output tokens over all choices, as usage counts them.
  size_t completion_tokens() const { return length() * choices.size(); }
  std::string text(size_t choice = 0) const;
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

// An error body: OpenAI {"error":{message,type,param,code}}, or Anthropic
// {"type":"error","error":{type,message}} when `anthropic` is true. The type follows the status.
std::string render_error(bool anthropic, int status, std::string_view message);

}  // namespace rolter::sim
