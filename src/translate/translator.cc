#include "translate/translator.h"

#include "translate/anthropic/anthropic_translators.h"
#include "translate/gemini/gemini_translator.h"

namespace rolter {

const Translator* find_translator(Api client, Api target) {
  if (client == Api::kChat && target == Api::kMessages) return &chat_to_anthropic();
  if (client == Api::kMessages && target == Api::kChat) return &anthropic_to_chat();
  if (client == Api::kChat && target == Api::kGemini) return &chat_to_gemini();
  return nullptr;
}

}  // namespace rolter
