#include "proxy/stream_error.h"

#include <gtest/gtest.h>

namespace rolter {
namespace {

struct Case {
  ApiKind kind;
  std::optional<uint64_t> last_sequence;
  const char* expected;
};

TEST(StreamError, ShapedForEachApi) {
  const Case cases[] = {
      {ApiKind::kChatCompletions, std::nullopt,
       "data: {\"error\":{\"message\":\"cut\",\"type\":\"api_error\",\"param\":null,"
       "\"code\":\"upstream_error\"}}\n\n"},
      {ApiKind::kCompletions, 7,
       "data: {\"error\":{\"message\":\"cut\",\"type\":\"api_error\",\"param\":null,"
       "\"code\":\"upstream_error\"}}\n\n"},
      {ApiKind::kResponses, 41,
       "event: error\ndata: {\"type\":\"error\",\"code\":\"upstream_error\",\"message\":\"cut\","
       "\"param\":null,\"sequence_number\":42}\n\n"},
      {ApiKind::kResponses, std::nullopt,
       "event: error\ndata: {\"type\":\"error\",\"code\":\"upstream_error\",\"message\":\"cut\","
       "\"param\":null,\"sequence_number\":0}\n\n"},
      {ApiKind::kMessages, std::nullopt,
       "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\","
       "\"message\":\"cut\"}}\n\n"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(stream_error_event(c.kind, "cut", c.last_sequence), c.expected);
  }
}

}  // namespace
}  // namespace rolter
