// libFuzzer target for the Gemini translators: chat_to_gemini() and embeddings_to_gemini().
//
// The first input byte picks the step (modulo 6): '0' chat request, '1' chat response, '2' error,
// '3' chat stream, '4' embeddings request, '5' embeddings response; the second byte sets the
// stream's piece size (1 + byte % 64) and, for errors, the upstream status. The seed files in
// corpus/translate_gemini_fuzz/ start with those two bytes. Beyond "never crash or throw", it
// checks invariants:
//   - every body produced (request, response, error) is JSON;
//   - a refusal names a status of 400 (the client's body) or 502 (the upstream's);
//   - a stream gives the same bytes whatever the piece size, every event it emits is
//     "data: <JSON>\n\n" or the final "data: [DONE]\n\n", and [DONE] never follows an error.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "translate/gemini/gemini_translator.h"

namespace {

void check(bool condition, const char* what) {
  if (!condition) {
    fprintf(stderr, "invariant violated: %s\n", what);
    abort();
  }
}

bool is_json(std::string_view text) {
  return !nlohmann::json::parse(text, nullptr, false).is_discarded();
}

void check_request(const rolter::Translator& translator, std::string_view body) {
  auto out = translator.request(body, {.model = "gemini-2.5-flash"});
  if (!out) {
    check(out.error().status == 400, "a request refusal that is not a 400");
    return;
  }
  check(is_json(out->body), "a request body that is not JSON");
  check(out->path.starts_with("/v1beta/models/gemini-2.5-flash:"), "a path for another model");
}

void check_response(const rolter::Translator& translator, std::string_view body) {
  auto out = translator.response(body, {.model = "m"});
  if (!out) {
    check(out.error().status == 502, "a response refusal that is not a 502");
    return;
  }
  check(is_json(*out), "a response body that is not JSON");
}

// The output with every "created" value zeroed: it is the clock's, not the translation's.
std::string without_created(std::string text) {
  static constexpr std::string_view kKey = "\"created\":";
  for (size_t at = text.find(kKey); at != std::string::npos; at = text.find(kKey, at + 1)) {
    const size_t digits = at + kKey.size();
    size_t end = digits;
    while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
    text.replace(digits, end - digits, "0");
  }
  return text;
}

std::string run_stream(std::string_view upstream, size_t piece) {
  auto stream = rolter::chat_to_gemini().stream({.model = "m"});
  std::string out;
  for (size_t at = 0; at < upstream.size(); at += piece)
    stream->feed(upstream.substr(at, piece), out);
  stream->finish(true, out);
  return without_created(std::move(out));
}

void check_stream(std::string_view upstream, size_t piece) {
  const std::string whole = run_stream(upstream, upstream.size() + 1);
  const std::string split = run_stream(upstream, piece);
  check(whole == split, "a stream whose output depends on the split");
  bool errored = false;
  size_t at = 0;
  while (at < whole.size()) {
    const size_t end = whole.find("\n\n", at);
    check(end != std::string::npos, "an event without its blank line");
    std::string_view event = std::string_view(whole).substr(at, end - at);
    check(event.starts_with("data: "), "an event that is not data");
    event.remove_prefix(6);
    if (event == "[DONE]") {
      check(!errored && end + 2 == whole.size(), "[DONE] after an error or not last");
    } else {
      const auto json = nlohmann::json::parse(event, nullptr, false);
      check(json.is_object(), "an event that is not a JSON object");
      errored = errored || json.contains("error");
    }
    at = end + 2;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data) + 2, size - 2);
  const uint8_t knob = data[1];
  switch (data[0] % 6) {
    case 0:
      check_request(rolter::chat_to_gemini(), input);
      break;
    case 1:
      check_response(rolter::chat_to_gemini(), input);
      break;
    case 2: {
      const auto error = rolter::chat_to_gemini().error(200u + knob * 2u, input);
      check(error.status >= 400 && error.status <= 599, "an error status out of range");
      check(is_json(error.body), "an error body that is not JSON");
      break;
    }
    case 3:
      check_stream(input, 1 + knob % 64);
      break;
    case 4:
      check_request(rolter::embeddings_to_gemini(), input);
      break;
    case 5:
      check_response(rolter::embeddings_to_gemini(), input);
      break;
  }
  return 0;
}
