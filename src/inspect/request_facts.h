// RequestFacts: everything the gateway reads from one request body and its routing headers.
//
// Filled by RequestInspector::inspect(); owns its buffers so a RouteContext built from it stays
// valid for as long as the facts are neither cleared nor refilled. Keep one RequestFacts per worker
// (or per connection) and reuse it: clear() keeps the capacity of every buffer, so a steady stream
// of requests parses without allocating.
//
// Thread-safety: a value type with no internal synchronisation; one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "balance/route_context.h"

namespace rolter {

// Which data-plane endpoint the body was posted to; decides where the conversation lives.
enum class ApiKind : uint8_t {
  kChatCompletions,  // POST /v1/chat/completions: `messages`
  kCompletions,      // POST /v1/completions: `prompt`
  kEmbeddings,       // POST /v1/embeddings: `input`
  kResponses,        // POST /v1/responses: `input`
  kMessages,         // POST /v1/messages (Anthropic): `system` + `messages`
};

std::string_view api_kind_name(ApiKind kind);

struct RequestFacts {
  ApiKind kind = ApiKind::kChatCompletions;

  // `model`, unescaped. The raw JSON token (with its quotes) is
  // body[model_token_offset, model_token_offset + model_token_length): see model_rewrite.h.
  std::string model;
  // The raw token itself, so a rewrite can check it is applied to the body it came from.
  std::string model_token;
  size_t model_token_offset = 0;
  size_t model_token_length = 0;

  // `stream`; false when absent or null.
  bool stream = false;
  // `stream_options.include_usage` is true: the client asked for the usage chunk of a stream.
  bool stream_usage = false;
  // The output the request caps itself at: `max_tokens`, `max_completion_tokens` or
  // `max_output_tokens`, when a non-negative integer; what a token limit reserves (SPEC §15).
  std::optional<uint64_t> output_cap;

  // The conversation text, bounded to RouteContext::kPromptBound bytes (may end inside a UTF-8
  // sequence: it is a byte prefix for affinity, not text to display).
  std::string prompt;
  // Byte length of the whole conversation text; prompt == first min(prompt_len, bound) bytes of it.
  size_t prompt_len = 0;
  // Hash of the whole conversation (text, roles, images, tool calls and results) when
  // conversation_read; of the raw body otherwise.
  uint64_t prompt_digest = 0;
  // False when the body is valid JSON but not of the shape the endpoint expects, so the
  // conversation could not be read: prompt is then empty and prompt_digest == body_hash.
  bool conversation_read = false;

  // hash64 of the raw body.
  uint64_t body_hash = 0;

  // From the x-rolter-vllm-token-ids header, or a /v1/completions token-array prompt.
  std::vector<uint32_t> token_ids;
  bool has_token_ids = false;

  // The x-session-id header; empty when absent.
  std::string session_key;

  // Forgets the previous request but keeps every buffer's capacity.
  void clear() {
    kind = ApiKind::kChatCompletions;
    model.clear();
    model_token.clear();
    model_token_offset = 0;
    model_token_length = 0;
    stream = false;
    stream_usage = false;
    output_cap.reset();
    prompt.clear();
    prompt_len = 0;
    prompt_digest = 0;
    conversation_read = false;
    body_hash = 0;
    token_ids.clear();
    has_token_ids = false;
    session_key.clear();
  }
};

// A view into `facts` for the balancers. `adapter` is left empty: only route resolution knows
// whether the request addressed a passthrough group. Valid while `facts` is unchanged.
inline RouteContext build_route_context(const RequestFacts& facts) {
  RouteContext ctx;
  ctx.session_key = facts.session_key;
  ctx.prompt = facts.prompt;
  ctx.prompt_len = facts.prompt_len;
  ctx.prompt_digest = facts.prompt_digest;
  ctx.body_hash = facts.body_hash;
  if (facts.has_token_ids) ctx.token_ids = std::span<const uint32_t>(facts.token_ids);
  return ctx;
}

}  // namespace rolter
