// libFuzzer target for both Anthropic translators: every step runs on every input.
//
// The first byte picks the upstream status for error() (300 + byte, so 3xx, 4xx, 5xx and 529 all
// occur) and, by its low bit, whether the stream ends clean; the rest is the body, given to
// request(), response() and error() of both translators, and fed as an upstream stream in pieces
// whose sizes come from the body's own bytes. The seed files in corpus/translate_anthropic_fuzz/
// are realistic requests, answers, errors and streams of both APIs behind one such byte.
// Beyond "never crash", it checks:
//   - every body produced (request, response, error) is JSON;
//   - a failure has a message, and a request failure is a 400;
//   - a stream's output does not depend on how its input was split.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "translate/anthropic/anthropic_translators.h"

namespace {

void check(bool condition, const char* what) {
  if (!condition) {
    fprintf(stderr, "invariant violated: %s\n", what);
    abort();
  }
}

bool is_json(const std::string& text) {
  return !nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false).is_discarded();
}

std::string run_stream(const rolter::Translator& translator, std::string_view body, bool split,
                       bool clean) {
  auto stream = translator.stream({.model = "fuzz-model"});
  std::string out;
  size_t at = 0;
  for (size_t i = 0; at < body.size(); ++i) {
    const size_t piece =
        split ? 1 + static_cast<unsigned char>(body[i % body.size()]) % 64 : body.size();
    stream->feed(body.substr(at, piece), out);
    at += piece;
  }
  stream->finish(clean, out);
  stream->usage();
  return out;
}

void fuzz_translator(const rolter::Translator& translator, unsigned status, bool clean,
                     std::string_view body) {
  const rolter::TranslateOptions options{.model = "fuzz-model", .default_max_tokens = 1000};
  if (auto request = translator.request(body, options)) {
    check(is_json(request->body), "request body is not JSON");
    check(!request->path.empty(), "request without a path");
  } else {
    check(request.error().status == 400, "request refused with a status other than 400");
    check(!request.error().message.empty(), "request error without a message");
  }
  if (auto response = translator.response(body, options)) {
    check(is_json(*response), "response is not JSON");
  } else {
    check(!response.error().message.empty(), "response error without a message");
  }
  const rolter::TranslatedError error = translator.error(status, body);
  check(is_json(error.body), "error body is not JSON");
  check(error.status >= 400 && error.status <= 599, "error status out of range");
  check(run_stream(translator, body, true, clean) == run_stream(translator, body, false, clean),
        "stream output depends on the split");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const unsigned status = 300 + data[0];
  const bool clean = (data[0] & 1) == 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  fuzz_translator(rolter::chat_to_anthropic(), status, clean, body);
  fuzz_translator(rolter::anthropic_to_chat(), status, clean, body);
  return 0;
}
