#include "translate/gemini/gemini_translator.h"

#include "translate/gemini/gemini_embeddings.h"
#include "translate/gemini/gemini_error.h"
#include "translate/gemini/gemini_request.h"
#include "translate/gemini/gemini_response.h"
#include "translate/gemini/gemini_stream.h"

namespace rolter {
namespace {

class ChatToGemini final : public Translator {
 public:
  tl::expected<TranslatedRequest, TranslateError> request(
      std::string_view client_body, const TranslateOptions& options) const override {
    return gemini::chat_request(client_body, options);
  }
  tl::expected<std::string, TranslateError> response(
      std::string_view upstream_body, const TranslateOptions& options) const override {
    return gemini::chat_response(upstream_body, options);
  }
  TranslatedError error(unsigned upstream_status, std::string_view upstream_body) const override {
    return gemini::chat_error(upstream_status, upstream_body);
  }
  std::unique_ptr<StreamTranslator> stream(const TranslateOptions& options) const override {
    return gemini::chat_stream(options);
  }
};

class EmbeddingsToGemini final : public Translator {
 public:
  tl::expected<TranslatedRequest, TranslateError> request(
      std::string_view client_body, const TranslateOptions& options) const override {
    return gemini::embeddings_request(client_body, options);
  }
  tl::expected<std::string, TranslateError> response(
      std::string_view upstream_body, const TranslateOptions& options) const override {
    return gemini::embeddings_response(upstream_body, options);
  }
  // Gemini's errors look the same whatever the method.
  TranslatedError error(unsigned upstream_status, std::string_view upstream_body) const override {
    return gemini::chat_error(upstream_status, upstream_body);
  }
  std::unique_ptr<StreamTranslator> stream(const TranslateOptions&) const override {
    return nullptr;
  }
};

}  // namespace

const Translator& chat_to_gemini() {
  static const ChatToGemini translator;
  return translator;
}

const Translator& embeddings_to_gemini() {
  static const EmbeddingsToGemini translator;
  return translator;
}

}  // namespace rolter
