// The two Translator objects: each dispatches its four steps to the functions of steps.h.
#include "translate/anthropic/anthropic_translators.h"

#include "translate/anthropic/steps.h"

namespace rolter {

namespace {

class ChatToAnthropic final : public Translator {
 public:
  tl::expected<TranslatedRequest, TranslateError> request(
      std::string_view body, const TranslateOptions& options) const override {
    return anthropic::chat_request_to_messages(body, options);
  }
  tl::expected<std::string, TranslateError> response(
      std::string_view body, const TranslateOptions& options) const override {
    return anthropic::messages_response_to_chat(body, options);
  }
  TranslatedError error(unsigned status, std::string_view body) const override {
    return anthropic::messages_error_to_chat(status, body);
  }
  std::unique_ptr<StreamTranslator> stream(const TranslateOptions& options) const override {
    return anthropic::messages_stream_to_chat(options);
  }
};

class AnthropicToChat final : public Translator {
 public:
  tl::expected<TranslatedRequest, TranslateError> request(
      std::string_view body, const TranslateOptions& options) const override {
    return anthropic::messages_request_to_chat(body, options);
  }
  tl::expected<std::string, TranslateError> response(
      std::string_view body, const TranslateOptions& options) const override {
    return anthropic::chat_response_to_messages(body, options);
  }
  TranslatedError error(unsigned status, std::string_view body) const override {
    return anthropic::chat_error_to_messages(status, body);
  }
  std::unique_ptr<StreamTranslator> stream(const TranslateOptions& options) const override {
    return anthropic::chat_stream_to_messages(options);
  }
};

}  // namespace

const Translator& chat_to_anthropic() {
  static const ChatToAnthropic translator;
  return translator;
}

const Translator& anthropic_to_chat() {
  static const AnthropicToChat translator;
  return translator;
}

}  // namespace rolter
