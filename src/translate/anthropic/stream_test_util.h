// Test helpers for the stream translators: feed a whole upstream stream at one piece size, and
// split the client stream back into events with a parser of its own (not SseReader), so the
// framing is checked independently of the code that reads the upstream.
//
// Thread-safety: test-only, single-threaded.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "translate/translator.h"

namespace rolter::anthropic {

enum class End { kClean, kBroken, kNone };

// The client stream for `upstream` fed in pieces of `piece` bytes, then finish() as `end` says.
inline std::string translate_stream(const Translator& translator, const std::string& upstream,
                                    size_t piece, End end,
                                    StreamTranslator::Usage* usage = nullptr) {
  auto stream = translator.stream({.model = "options-model"});
  std::string out;
  for (size_t at = 0; at < upstream.size(); at += piece) {
    stream->feed(std::string_view(upstream).substr(at, piece), out);
  }
  if (end != End::kNone) stream->finish(end == End::kClean, out);
  if (usage != nullptr) *usage = stream->usage();
  return out;
}

struct ClientEvent {
  std::string event;  // the "event:" line, empty when none
  std::string data;
};

// Splits "event: x\ndata: y\n\n" or "data: y\n\n" events; an event of another shape fails.
inline std::vector<ClientEvent> split_events(const std::string& stream) {
  std::vector<ClientEvent> events;
  size_t at = 0;
  while (at < stream.size()) {
    const size_t end = stream.find("\n\n", at);
    if (end == std::string::npos) {
      ADD_FAILURE() << "unterminated event: " << stream.substr(at);
      break;
    }
    std::string block = stream.substr(at, end - at);
    at = end + 2;
    ClientEvent event;
    if (block.rfind("event: ", 0) == 0) {
      const size_t newline = block.find('\n');
      event.event = block.substr(7, newline - 7);
      block = newline == std::string::npos ? "" : block.substr(newline + 1);
    }
    EXPECT_EQ(block.rfind("data: ", 0), 0u) << "event without data: " << block;
    EXPECT_EQ(block.find('\n'), std::string::npos) << "multi-line event: " << block;
    event.data = block.size() >= 6 ? block.substr(6) : "";
    events.push_back(std::move(event));
  }
  return events;
}

}  // namespace rolter::anthropic
