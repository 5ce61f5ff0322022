// Rendering of simulated answers in Gemini's native wire shape (gemini_request.h serves the
// paths): GenerateContentResponse bodies, their SSE stream, embeddings and errors.
//
//   {"candidates":[{"content":{"parts":[{"text":"..."}],"role":"model"},"finishReason":"STOP",
//     "index":0}],"usageMetadata":{"promptTokenCount":P,"candidatesTokenCount":C,
//     "totalTokenCount":P+C,"cachedContentTokenCount":K (only when K > 0)},
//    "modelVersion":"<model>","responseId":"<id>"}
//
// A stream sends one chunk per output token (each candidate's text part of that token, no
// finishReason), then one last chunk carrying every candidate's finishReason and the
// usageMetadata (its text part is empty; for a tool call it holds the whole functionCall part,
// Gemini never streams a call in pieces). Each event is `data: <json>\r\n\r\n`, as Google
// frames them. finishReason is STOP (end of text, a stop sequence, a tool call) or MAX_TOKENS.
//
// Thread-safety: pure functions over values.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sim/api_format.h"

namespace rolter::sim {

std::string gemini_response(const Completion& c);
// The chunk of output token `index` of candidate `choice`; "" (send nothing) for a tool call,
// whose part comes whole in the last chunk.
std::string gemini_stream_token(const Completion& c, size_t choice, size_t index);
std::vector<std::string> gemini_stream_epilogue(const Completion& c);

// embedContent: {"embedding":{"values":[...]}}; batchEmbedContents: {"embeddings":[...]}.
std::string gemini_embeddings(const std::vector<Embedding>& data, bool batch);

// {"error":{"code":status,"message":...,"status":"INVALID_ARGUMENT"|"RESOURCE_EXHAUSTED"|...}}.
std::string gemini_error(int status, std::string_view message);

}  // namespace rolter::sim
