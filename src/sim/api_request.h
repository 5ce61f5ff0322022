// What a simulated engine needs from an API request body: the model, whether to stream, the
// prompt (for counting and for seeding the generated text), how many tokens to produce, the stop
// sequences and the tool to call (tool_calls.h), for each of the inference APIs: OpenAI chat,
// completions, embeddings, responses; Anthropic messages; Gemini generateContent (streaming or
// not), embedContent and batchEmbedContents (gemini_request.h reads those bodies).
//
// Thread-safety: pure functions over values.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <tl/expected.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/kv_transfer_params.h"
#include "sim/tool_calls.h"

namespace rolter::sim {

enum class ApiKind {
  kChat,
  kCompletions,
  kEmbeddings,
  kResponses,
  kMessages,
  kGemini,            // models/{m}:generateContent and :streamGenerateContent
  kGeminiEmbed,       // models/{m}:embedContent
  kGeminiBatchEmbed,  // models/{m}:batchEmbedContents
};

// Gemini's three methods.
bool is_gemini(ApiKind api);
// The APIs answered with vectors (no engine model, no streaming).
bool is_embeddings(ApiKind api);

// How /v1/embeddings returns each vector (`encoding_format`).
enum class EmbeddingEncoding { kFloat, kBase64 };

// Largest `n` accepted: OpenAI's own limit; it also bounds the output one request can ask for.
inline constexpr size_t kMaxChoices = 128;
// Largest embeddings `dimensions` accepted: far above any model's width (OpenAI's largest is
// 3072), and a bound on the vector built per input before anything is allocated for it.
inline constexpr size_t kMaxEmbeddingDims = 1u << 16;

// The API served at `path` ("/v1/chat/completions", "/v1beta/models/m:generateContent", ...), or
// nullopt.
std::optional<ApiKind> api_for_path(std::string_view path);

struct ApiRequest {
  std::string model;  // as received; empty when the body has none
  bool stream = false;
  bool include_usage = false;  // chat/completions stream_options.include_usage
  // The prompt as text (message contents in order, joined by newlines), or the decimal token ids
  // of a token-array prompt; seeds the generated text.
  std::string prompt_text;
  size_t prompt_tokens = 0;
  // A completions prompt given as one array of token ids: those ids as sent. Empty otherwise;
  // the engine then tokenises prompt_text (tokenizer/tokenizer.h).
  std::vector<uint32_t> prompt_ids;
  std::optional<size_t> max_tokens;  // the API's own max-tokens field, when given
  // Chat and completions: choices to generate per prompt (`n`); 1 for the other APIs.
  size_t n = 1;
  // Embeddings inputs, or completions prompts (one, or each prompt of a batch): one entry per
  // input (text, or token ids rendered as text), with its token count. Empty for other APIs.
  std::vector<std::string> inputs;
  std::vector<size_t> input_tokens;
  // Embeddings: the vector length asked for (`dimensions`), and the wire encoding.
  std::optional<size_t> dimensions;
  EmbeddingEncoding encoding = EmbeddingEncoding::kFloat;
  // Stop sequences as given (stop_sequences.h); empty strings are ignored there.
  std::vector<std::string> stop;
  // Chat-like APIs: the tool the answer calls (tool_calls.h's rule); nullopt = answer with text.
  std::optional<ToolChoice> tool;
  // Chat and completions: the prefill/decode handshake field (kv_transfer_params.h), when given.
  std::optional<KvTransferParams> kv_transfer;
};

// Reads `body` (already parsed JSON) as a request of `api`. The error is a message for a 400
// invalid_request_error.
tl::expected<ApiRequest, std::string> read_api_request(ApiKind api, const nlohmann::json& body);

}  // namespace rolter::sim
