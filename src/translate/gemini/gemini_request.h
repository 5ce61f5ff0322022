// Internal: a chat-completions request as a Gemini generateContent / streamGenerateContent
// request. See gemini_translator.h for the mapping as a whole.
//
// Thread-safety: a pure function.
#pragma once

#include <tl/expected.hpp>

#include <string_view>

#include "translate/translator.h"

namespace rolter::gemini {

tl::expected<TranslatedRequest, TranslateError> chat_request(std::string_view client_body,
                                                             const TranslateOptions& options);

}  // namespace rolter::gemini
