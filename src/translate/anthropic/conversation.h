// The conversation part of a request, in both directions: chat-completions `messages` into
// Anthropic's top-level `system` and alternating `messages`, and back. The other request fields
// are the request files' job (chat_request_to_messages.cc, messages_request_to_chat.cc).
//
// Thread-safety: pure functions.
#pragma once

#include <tl/expected.hpp>

#include "translate/anthropic/json_util.h"

namespace rolter::anthropic {

struct MessagesConversation {
  Json system;    // null (no system message), a string, or an array of text blocks
  Json messages;  // array of {role, content: [blocks]}, roles alternating
};

// `messages` of a chat-completions request. Errors name the field ("messages[2].role").
tl::expected<MessagesConversation, TranslateError> chat_conversation_to_messages(
    const Json& messages);

// `system` and `messages` of an Anthropic request (system may be null) as chat `messages`.
tl::expected<Json, TranslateError> messages_conversation_to_chat(const Json* system,
                                                                 const Json& messages);

}  // namespace rolter::anthropic
