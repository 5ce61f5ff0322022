// Test helpers for the Gemini translator tests: reading produced JSON by JSON pointer, and
// feeding a stream in pieces of a given size.
//
// Thread-safety: test code, one thread.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "translate/translator.h"

namespace rolter::gemini_test {

using Json = nlohmann::json;

// One expectation: the value at a JSON pointer, as JSON text ("absent" when it must be missing).
struct Expect {
  std::string pointer;
  std::string value;
};

inline Json parse(std::string_view text) {
  Json value = Json::parse(text, nullptr, false);
  EXPECT_FALSE(value.is_discarded()) << text;
  return value;
}

inline void expect_fields(const Json& doc, const std::vector<Expect>& expects,
                          const std::string& label) {
  for (const auto& expect : expects) {
    const Json::json_pointer pointer(expect.pointer);
    if (expect.value == "absent") {
      EXPECT_FALSE(doc.contains(pointer))
          << label << ": " << expect.pointer << " in " << doc.dump();
      continue;
    }
    ASSERT_TRUE(doc.contains(pointer))
        << label << ": no " << expect.pointer << " in " << doc.dump();
    EXPECT_EQ(doc.at(pointer), Json::parse(expect.value))
        << label << ": " << expect.pointer << " in " << doc.dump();
  }
}

// The stream's client output when `upstream` is fed in pieces of `piece` bytes, then finished.
// "created" is set to 0: it is the clock's, not the translation's.
inline std::string run_stream(const Translator& translator, std::string_view upstream, size_t piece,
                              bool clean = true) {
  auto stream = translator.stream({.model = "gemini-test"});
  std::string out;
  for (size_t at = 0; at < upstream.size(); at += piece)
    stream->feed(upstream.substr(at, piece), out);
  stream->finish(clean, out);
  static const std::regex kCreated("\"created\":[0-9]+");
  return std::regex_replace(out, kCreated, "\"created\":0");
}

// The JSON of each "data:" event of a chat stream ("[DONE]" kept as the string "[DONE]").
inline std::vector<Json> stream_events(std::string_view out) {
  std::vector<Json> events;
  size_t at = 0;
  while (at < out.size()) {
    const size_t end = out.find("\n\n", at);
    EXPECT_NE(end, std::string_view::npos) << "an event without its blank line: " << out.substr(at);
    if (end == std::string_view::npos) break;
    std::string_view event = out.substr(at, end - at);
    EXPECT_TRUE(event.starts_with("data: ")) << event;
    event.remove_prefix(6);
    events.push_back(event == "[DONE]" ? Json("[DONE]") : parse(event));
    at = end + 2;
  }
  return events;
}

}  // namespace rolter::gemini_test
