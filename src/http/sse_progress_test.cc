#include "http/sse_progress.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rolter {
namespace {

struct Case {
  const char* name;
  std::vector<std::string> chunks;
  int first_content_chunk;  // index of the chunk after which content is seen; -1 = never
};

TEST(SseProgress, FirstContentEvent) {
  const std::string role =
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n";
  const std::string token =
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n";
  const Case cases[] = {
      {"chat: role chunk, then a token", {role, token}, 1},
      {"chat: token split inside the key",
       {role + "data: {\"choices\":[{\"delta\":{\"cont", "ent\":\"x\"}}]}\n\n"},
       1},
      {"chat: token split before the value", {"data: {\"delta\":{\"content\": ", "\"x\"}}\n\n"}, 1},
      {"chat: empty content only", {role, role}, -1},
      {"chat: reasoning first",
       {"data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"hmm\"}}]}\n\n"},
       0},
      {"chat: tool call arguments",
       {"data: "
        "{\"delta\":{\"tool_calls\":[{\"function\":{\"name\":\"f\",\"arguments\":\"\"}}]}}\n\n",
        "data: {\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":\"{\\\"\"}}]}}\n\n"},
       1},
      {"completions: text", {"data: {\"choices\":[{\"text\":\" the\"}]}\n\n"}, 0},
      {"anthropic: start, block start, delta",
       {"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"content\":[]}}\n\n",
        "event: content_block_start\ndata: "
        "{\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "event: content_block_delta\ndata: "
        "{\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n"},
       2},
      {"responses: created, then a delta",
       {"event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"output\":[],"
        "\"text\":{\"format\":{\"type\":\"text\"}}},\"sequence_number\":0}\n\n",
        "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\","
        "\"delta\":\"Hi\",\"sequence_number\":3}\n\n"},
       1},
      {"an escaped key inside a string is not a key",
       {"data: {\"delta\":{\"content\":\"\",\"note\":\"\\\"content\\\":\\\"x\"}}\n\n"},
       -1},
  };
  for (const auto& c : cases) {
    SseProgress progress;
    int seen_at = -1;
    for (size_t i = 0; i < c.chunks.size(); ++i) {
      if (progress.feed(c.chunks[i]) && seen_at < 0) seen_at = static_cast<int>(i);
    }
    EXPECT_EQ(seen_at, c.first_content_chunk) << c.name;
  }
}

TEST(SseProgress, LastSequenceNumberAcrossChunks) {
  SseProgress progress;
  progress.feed("data: {\"type\":\"response.created\",\"sequence_number\":0}\n\n");
  EXPECT_EQ(progress.last_sequence_number(), 0u);
  progress.feed("data: {\"delta\":\"a\",\"sequence_numb");
  progress.feed("er\":41}\n\n");
  EXPECT_EQ(progress.last_sequence_number(), 41u);
}

TEST(SseProgress, EveryByteSplitFindsTheToken) {
  const std::string stream =
      "data: {\"delta\":{\"content\":\"\"}}\n\ndata: {\"delta\":{\"content\":\"x\"}}\n\n";
  const size_t token_at = stream.find("\"x\"");
  for (size_t split = 1; split < stream.size(); ++split) {
    SseProgress progress;
    const bool first = progress.feed(std::string_view(stream).substr(0, split));
    const bool second = progress.feed(std::string_view(stream).substr(split));
    EXPECT_EQ(first, split > token_at + 1) << split;
    EXPECT_TRUE(second) << split;
  }
}

// Each content piece is counted once, however the stream is cut: in one piece, at every byte,
// and in chunks shorter than the seam.
TEST(SseProgress, ContentPiecesCountedOnceWhateverTheSplits) {
  std::string stream = "data: {\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}\n\n";
  for (int i = 0; i < 12; ++i) {
    stream += "data: {\"choices\":[{\"delta\":{\"content\":\"t" + std::to_string(i) + "\"}}]}\n\n";
  }
  stream += "data: [DONE]\n\n";
  {
    SseProgress whole;
    whole.feed(stream);
    EXPECT_EQ(whole.content_pieces(), 12u);
  }
  for (size_t split = 1; split < stream.size(); ++split) {
    SseProgress progress;
    progress.feed(std::string_view(stream).substr(0, split));
    progress.feed(std::string_view(stream).substr(split));
    EXPECT_EQ(progress.content_pieces(), 12u) << split;
  }
  for (size_t size : {1, 3, 7, 20, 63, 64, 65, 100}) {
    SseProgress progress;
    for (size_t at = 0; at < stream.size(); at += size) {
      progress.feed(std::string_view(stream).substr(at, size));
    }
    EXPECT_EQ(progress.content_pieces(), 12u) << size;
  }
}

TEST(SseEvents, CompleteEventsLength) {
  struct Case {
    std::string_view text;
    size_t expected;
  };
  const Case cases[] = {
      {"", 0},
      {"data: {\"a\":1}", 0},
      {"data: {\"a\":1}\n", 0},
      {"data: {\"a\":1}\n\n", 15},
      {"data: 1\n\ndata: {\"id\":\"c", 9},
      {"data: 1\r\n\r\ndata: 2", 11},
      {"data: 1\r\rdata", 9},
      {"event: x\ndata: 1\n\nevent: y\ndata: 2\n\n", 36},
  };
  for (const auto& c : cases) EXPECT_EQ(complete_events_length(c.text), c.expected) << c.text;
}

}  // namespace
}  // namespace rolter
