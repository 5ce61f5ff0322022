// The two translators between OpenAI chat completions and Anthropic Messages (SPEC §16):
// chat_to_anthropic() serves a chat-completions client from an Anthropic target, and
// anthropic_to_chat() serves an Anthropic Messages client from an OpenAI-compatible target.
// find_translator() in translate/translator.h is the usual way in; the steps live in the files
// of this folder, one per direction and step.
//
// Thread-safety: both objects are immutable singletons, shared by all threads.
#pragma once

#include "translate/translator.h"

namespace rolter {

// Client: chat completions (/v1/chat/completions). Target: Anthropic Messages (/v1/messages).
const Translator& chat_to_anthropic();
// Client: Anthropic Messages (/v1/messages). Target: chat completions (/v1/chat/completions).
const Translator& anthropic_to_chat();

}  // namespace rolter
