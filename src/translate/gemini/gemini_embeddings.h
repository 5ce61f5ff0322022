// Internal: OpenAI /v1/embeddings to Gemini batchEmbedContents, where the mapping is direct.
//
//   request:  input (a string or an array of strings) → requests[i] {model "models/<model>",
//             content {parts [{text}]}, outputDimensionality from dimensions}; token-array input
//             and encoding_format "base64" have no Gemini equivalent and are a 400 naming them.
//   response: {embeddings [{values}]} → {object "list", data [{object "embedding", index,
//             embedding}], model, usage {prompt_tokens 0, total_tokens 0}} (Gemini's answer
//             counts no tokens, and zero is what a client that sums usage can add).
//
// Thread-safety: pure functions.
#pragma once

#include <tl/expected.hpp>

#include <string>
#include <string_view>

#include "translate/translator.h"

namespace rolter::gemini {

tl::expected<TranslatedRequest, TranslateError> embeddings_request(std::string_view client_body,
                                                                   const TranslateOptions& options);

tl::expected<std::string, TranslateError> embeddings_response(std::string_view upstream_body,
                                                              const TranslateOptions& options);

}  // namespace rolter::gemini
