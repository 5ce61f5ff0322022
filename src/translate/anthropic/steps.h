// The steps of both translators, one free function (or stream class factory) each, so every file
// of this folder does one job and the translator objects only dispatch. Internal to
// translate/anthropic/.
//
// Naming: <what the upstream or client sent>_to_<what it becomes>. "chat" is OpenAI chat
// completions, "messages" is Anthropic Messages.
//
// Thread-safety: pure functions; each stream translator belongs to one exchange.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "translate/translator.h"

namespace rolter::anthropic {

// chat_to_anthropic(): a chat-completions client, an Anthropic target.
tl::expected<TranslatedRequest, TranslateError> chat_request_to_messages(
    std::string_view body, const TranslateOptions& options);
tl::expected<std::string, TranslateError> messages_response_to_chat(
    std::string_view body, const TranslateOptions& options);
TranslatedError messages_error_to_chat(unsigned status, std::string_view body);
std::unique_ptr<StreamTranslator> messages_stream_to_chat(const TranslateOptions& options);

// anthropic_to_chat(): an Anthropic Messages client, an OpenAI-compatible target.
tl::expected<TranslatedRequest, TranslateError> messages_request_to_chat(
    std::string_view body, const TranslateOptions& options);
tl::expected<std::string, TranslateError> chat_response_to_messages(
    std::string_view body, const TranslateOptions& options);
TranslatedError chat_error_to_messages(unsigned status, std::string_view body);
std::unique_ptr<StreamTranslator> chat_stream_to_messages(const TranslateOptions& options);

}  // namespace rolter::anthropic
