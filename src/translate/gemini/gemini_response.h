// Internal: a whole Gemini GenerateContentResponse as a chat.completion.
//
//   candidates[i] → choices[index]: text parts joined → message.content (null when the
//   candidate only called functions), functionCall parts → message.tool_calls, finishReason →
//   finish_reason (gemini_candidate.h); usageMetadata → usage; model = options.model, else
//   modelVersion. A prompt Gemini blocked (promptFeedback.blockReason, no candidates) is one
//   choice with empty content and finish_reason "content_filter", as OpenAI reports its own
//   filter, so a client and fallback_on = content_filter see the usual signal.
//
// Thread-safety: a pure function.
#pragma once

#include <tl/expected.hpp>

#include <string>
#include <string_view>

#include "translate/translator.h"

namespace rolter::gemini {

tl::expected<std::string, TranslateError> chat_response(std::string_view upstream_body,
                                                        const TranslateOptions& options);

}  // namespace rolter::gemini
