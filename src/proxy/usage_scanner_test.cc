#include "proxy/usage_scanner.h"

#include <gtest/gtest.h>

#include <string>

namespace rolter {
namespace {

TEST(UsageScanner, OpenAiJsonBody) {
  UsageScanner s;
  s.feed(R"({"id":"x","usage":{"prompt_tokens":12,"completion_tokens":34,"total_tokens":46}})");
  EXPECT_EQ(s.input_tokens(), 12u);
  EXPECT_EQ(s.output_tokens(), 34u);
}

TEST(UsageScanner, AnthropicStreamKeepsLastValues) {
  UsageScanner s;
  s.feed(
      "event: message_start\ndata: "
      "{\"message\":{\"usage\":{\"input_tokens\":7,\"output_tokens\":1}}}\n\n");
  s.feed("event: message_delta\ndata: {\"usage\":{\"output_tokens\": 25}}\n\n");
  EXPECT_EQ(s.input_tokens(), 7u);
  EXPECT_EQ(s.output_tokens(), 25u);
}

TEST(UsageScanner, FieldSplitAcrossChunksAtEveryPosition) {
  const std::string body =
      "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1234,\"completion_tokens\":56}}\n\n"
      "data: [DONE]\n\n";
  for (size_t cut = 1; cut < body.size(); ++cut) {
    UsageScanner s;
    s.feed(std::string_view(body).substr(0, cut));
    s.feed(std::string_view(body).substr(cut));
    EXPECT_EQ(s.input_tokens(), 1234u) << cut;
    EXPECT_EQ(s.output_tokens(), 56u) << cut;
  }
}

TEST(UsageScanner, ByteByByte) {
  const std::string body = R"({"usage":{"prompt_tokens":9,"completion_tokens":10}})";
  UsageScanner s;
  for (char c : body) s.feed(std::string_view(&c, 1));
  EXPECT_EQ(s.input_tokens(), 9u);
  EXPECT_EQ(s.output_tokens(), 10u);
}

TEST(UsageScanner, CachedTokensCountedApart) {
  struct Case {
    std::string body;
    uint64_t input;
    uint64_t cached;
    uint64_t output;
  };
  const Case cases[] = {
      // OpenAI chat: cached_tokens is a part of prompt_tokens.
      {R"({"usage":{"prompt_tokens":100,"completion_tokens":5,)"
       R"("prompt_tokens_details":{"cached_tokens":64}}})",
       100, 64, 5},
      // Responses: the same, under input_tokens_details.
      {R"({"usage":{"input_tokens":80,"input_tokens_details":{"cached_tokens":32},)"
       R"("output_tokens":7}})",
       80, 32, 7},
      // Anthropic: cache reads and writes come on top of input_tokens.
      {R"({"usage":{"input_tokens":10,"cache_read_input_tokens":50,)"
       R"("cache_creation_input_tokens":20,"output_tokens":3}})",
       80, 50, 3},
  };
  for (const auto& c : cases) {
    for (size_t cut = 1; cut < c.body.size(); ++cut) {
      UsageScanner s;
      s.feed(std::string_view(c.body).substr(0, cut));
      s.feed(std::string_view(c.body).substr(cut));
      EXPECT_EQ(s.input_tokens(), c.input) << c.body << " cut " << cut;
      EXPECT_EQ(s.cached_input_tokens(), c.cached) << c.body << " cut " << cut;
      EXPECT_EQ(s.output_tokens(), c.output) << c.body << " cut " << cut;
    }
  }
}

TEST(UsageScanner, NoUsageNoNumbers) {
  UsageScanner s;
  s.feed(R"({"prompt_tokens":"many","completion_tokens":})");
  s.feed("garbage \"prompt_tokens\"");
  EXPECT_FALSE(s.input_tokens().has_value());
  EXPECT_FALSE(s.output_tokens().has_value());
}

}  // namespace
}  // namespace rolter
