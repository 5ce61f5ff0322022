#include "translate/sse_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rolter {
namespace {

std::vector<SseEvent> read_split(std::string_view stream, size_t piece) {
  SseReader reader;
  std::vector<SseEvent> events;
  for (size_t at = 0; at < stream.size(); at += piece) {
    reader.feed(stream.substr(at, piece), [&](const SseEvent& e) { events.push_back(e); });
  }
  return events;
}

TEST(SseReader, SplitsEventsWhateverThePieceSize) {
  const std::string stream =
      "event: message_start\r\ndata: {\"a\":1}\r\n\r\n"
      ": keep-alive\n\n"
      "data: line one\ndata: line two\n\n"
      "event: ping\n\n"  // no data: not dispatched
      "id: 7\rdata:no-space\r\r";
  for (size_t piece = 1; piece <= stream.size(); ++piece) {
    const auto events = read_split(stream, piece);
    ASSERT_EQ(events.size(), 3u) << "piece " << piece;
    EXPECT_EQ(events[0].event, "message_start");
    EXPECT_EQ(events[0].data, "{\"a\":1}");
    EXPECT_EQ(events[1].event, "");
    EXPECT_EQ(events[1].data, "line one\nline two");
    EXPECT_EQ(events[2].data, "no-space");
  }
}

TEST(SseReader, HoldsAnIncompleteEvent) {
  SseReader reader;
  int seen = 0;
  reader.feed("data: {\"partial\"", [&](const SseEvent&) { ++seen; });
  EXPECT_EQ(seen, 0);
  EXPECT_GT(reader.pending(), 0u);
  reader.feed(":1}\n\n", [&](const SseEvent& e) {
    ++seen;
    EXPECT_EQ(e.data, "{\"partial\":1}");
  });
  EXPECT_EQ(seen, 1);
  EXPECT_EQ(reader.pending(), 0u);
}

}  // namespace
}  // namespace rolter
