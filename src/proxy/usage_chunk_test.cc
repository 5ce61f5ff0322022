#include "proxy/usage_chunk.h"

#include <gtest/gtest.h>

#include <string>

namespace rolter {
namespace {

std::string dropped(std::string text) {
  text.resize(drop_usage_events(text.data(), text.size()));
  return text;
}

TEST(UsageChunk, RecognisesTheUsageOnlyChunk) {
  struct Case {
    std::string_view event;
    bool usage_only;
  };
  const Case cases[] = {
      {R"(data: {"id":"c","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}})", true},
      {R"(data: {"id":"c", "choices" : [ ] , "usage" : {"prompt_tokens":3}})", true},
      {"data:{\"usage\":{\"prompt_tokens\":3},\"choices\":[]}\n\n", true},
      // A content chunk: choices is not empty.
      {R"(data: {"choices":[{"delta":{"content":"hi"}}],"usage":null})", false},
      // vLLM's continuous usage: usage rides on a content chunk.
      {R"(data: {"choices":[{"delta":{"content":"x"}}],"usage":{"prompt_tokens":1}})", false},
      // The words inside a string are text, not keys.
      {R"(data: {"choices":[{"delta":{"content":"\"choices\":[],\"usage\":{}"}}]})", false},
      {R"(data: {"choices":[],"usage":null})", false},
      {"data: [DONE]", false},
      {"event: message_delta\ndata: {\"usage\":{\"output_tokens\":3}}", false},
  };
  for (const auto& c : cases) EXPECT_EQ(is_usage_only_event(c.event), c.usage_only) << c.event;
}

TEST(UsageChunk, DropsOnlyTheUsageEventAndKeepsEveryOtherByte) {
  const std::string a = "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n";
  const std::string b = "data: {\"choices\":[{\"finish_reason\":\"stop\",\"delta\":{}}]}\n\n";
  const std::string usage =
      "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2}}\n\n";
  const std::string done = "data: [DONE]\n\n";
  EXPECT_EQ(dropped(a + b + usage + done), a + b + done);
  EXPECT_EQ(dropped(usage), "");
  EXPECT_EQ(dropped(a + b + done), a + b + done);
  // CRLF framing.
  const std::string crlf_usage = "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1}}\r\n\r\n";
  EXPECT_EQ(dropped("data: x\r\n\r\n" + crlf_usage + "data: [DONE]\r\n\r\n"),
            "data: x\r\n\r\ndata: [DONE]\r\n\r\n");
  // An incomplete usage event at the end stays until it is complete.
  const std::string partial = usage.substr(0, usage.size() - 1);
  EXPECT_EQ(dropped(a + partial), a + partial);
}

}  // namespace
}  // namespace rolter
