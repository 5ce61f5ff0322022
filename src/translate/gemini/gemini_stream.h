// Internal: a Gemini streamGenerateContent?alt=sse body as chat.completion.chunk events.
//
// Each Gemini event is a whole GenerateContentResponse holding the next parts of each
// candidate; the last one of a candidate carries its finishReason, and usageMetadata comes with
// the events (the last one counts). Per candidate index, the client gets:
//   a first chunk with delta {role "assistant", content ""};
//   per event, one content delta with its text parts joined, then one tool_calls delta per
//   functionCall part (Gemini sends a call whole: index n, id, type, name and all arguments);
//   a chunk with finish_reason when the finishReason arrives;
// and at the end a usage chunk (choices []) and "data: [DONE]". A prompt Gemini blocks is a
// role chunk and a content_filter finish on choice 0.
//
// An error object in the stream is the OpenAI stream error event data: {"error": {...}} (mapped
// like a non-2xx answer), after which the rest of the upstream stream is ignored. So is a
// stream that ends, cleanly or not, before every candidate it began has finished, or an event
// that is not JSON. No [DONE] follows an error.
//
// Thread-safety: one translator per exchange.
#pragma once

#include <memory>

#include "translate/translator.h"

namespace rolter::gemini {

std::unique_ptr<StreamTranslator> chat_stream(const TranslateOptions& options);

}  // namespace rolter::gemini
