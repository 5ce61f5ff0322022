// Gemini's native API as the simulated engines serve it: which method a path names, and what an
// engine needs from each request body (the ApiRequest of api_request.h).
//
//   POST /v1beta/models/{model}:generateContent             one GenerateContentResponse
//   POST /v1beta/models/{model}:streamGenerateContent?alt=sse   SSE of GenerateContentResponse
//   POST /v1beta/models/{model}:embedContent                {"embedding":{"values":[...]}}
//   POST /v1beta/models/{model}:batchEmbedContents          {"embeddings":[{"values":[...]},...]}
// (/v1/models/... is accepted too.) The model comes from the path, never from the body. The
// stream is always SSE, whatever `alt` says.
//
// generateContent reads: contents[] (role "user"/"model", parts text / inlineData / fileData /
// functionCall / functionResponse; only text parts count as prompt words), systemInstruction
// (its text parts come first), tools[].functionDeclarations and toolConfig.functionCallingConfig
// (tool_calls.h), generationConfig {maxOutputTokens, stopSequences, candidateCount (1..8),
// temperature and topP (accepted, no effect)}.
//
// Thread-safety: pure functions over values.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <tl/expected.hpp>

#include <optional>
#include <string>
#include <string_view>

#include "sim/api_request.h"

namespace rolter::sim {

// Gemini's own limit on candidateCount.
inline constexpr size_t kMaxGeminiCandidates = 8;

struct GeminiPath {
  ApiKind api = ApiKind::kGemini;
  std::string model;
  bool stream = false;  // :streamGenerateContent
};

// The Gemini method `path` names, or nullopt when it is not one (an unknown method included).
std::optional<GeminiPath> parse_gemini_path(std::string_view path);

// Reads `body` as a request of a Gemini `api` into `req` (model and stream excepted: they come
// from the path). The error is a message for a 400 INVALID_ARGUMENT.
tl::expected<void, std::string> read_gemini_request(ApiKind api, const nlohmann::json& body,
                                                    ApiRequest& req);

}  // namespace rolter::sim
