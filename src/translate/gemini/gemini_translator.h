// Translators from OpenAI's API to Google's Generative Language API (Gemini), SPEC §16.
//
// chat_to_gemini(): chat completions → generateContent. The request's path starts at the API
// root, which the target's base_url supplies (https://generativelanguage.googleapis.com):
// "/v1beta/models/<model>:generateContent", or ":streamGenerateContent?alt=sse" for a stream;
// <model> is TranslateOptions::model (else the body's "model"), a leading "models/" dropped,
// percent-encoded. The key goes in the x-goog-api-key header, which is the caller's business.
// The mapping of each part lives beside its code:
//   request   gemini_request.cc, gemini_contents.cc, gemini_parts.cc, gemini_tools.cc,
//             gemini_schema.cc, gemini_generation_config.cc
//   response  gemini_response.h, gemini_candidate.h (finish reasons, tool-call ids, usage)
//   stream    gemini_stream.h
//   errors    gemini_error.h
//
// embeddings_to_gemini(): /v1/embeddings → "/v1beta/models/<model>:batchEmbedContents"
// (gemini_embeddings.h). Embeddings do not stream: its stream() returns nullptr.
//
// Thread-safety: both translators are immutable singletons, shared by all threads.
#pragma once

#include "translate/translator.h"

namespace rolter {

const Translator& chat_to_gemini();
const Translator& embeddings_to_gemini();

}  // namespace rolter
