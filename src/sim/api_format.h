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
  std::vector<std::string> tokens;  // output pieces; concatenated they are the text
  bool hit_max_tokens = false;      // finish_reason "length" / stop_reason "max_tokens"
  bool include_usage = false;       // chat/completions streams: send the usage chunk

  std::string text() const;
};

// The non-streaming response body.
std::string render_response(const Completion& c);

// Stream events sent just before the first token (Responses and Messages framing; none for
// chat/completions, whose first token chunk carries the role).
std::vector<std::string> render_stream_prologue(const Completion& c);
// The event carrying output token `index`.
std::string render_stream_token(const Completion& c, size_t index);
// Events after the last token: the finish chunk, usage and `[DONE]` (or the API's equivalent).
std::vector<std::string> render_stream_epilogue(const Completion& c);

struct Embedding {
  std::vector<float> vector;
};
std::string render_embeddings(std::string_view model, const std::vector<Embedding>& data,
                              size_t prompt_tokens);

// An error body: OpenAI {"error":{message,type,param,code}}, or Anthropic
// {"type":"error","error":{type,message}} when `anthropic` is true. The type follows the status.
std::string render_error(bool anthropic, int status, std::string_view message);

}  // namespace rolter::sim
