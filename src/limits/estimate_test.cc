#include "limits/estimate.h"

#include <gtest/gtest.h>

namespace rolter {
namespace {

TEST(Estimate, Tokens) {
  struct Case {
    std::optional<uint64_t> engine;
    size_t bytes;
    std::optional<uint64_t> cap;
    uint64_t expected;
  };
  const Case cases[] = {
      {std::nullopt, 0, std::nullopt, 1024},
      {std::nullopt, 1, std::nullopt, 1 + 1024},  // ceil(1/4)
      {std::nullopt, 4, std::nullopt, 1 + 1024},
      {std::nullopt, 5, 100, 2 + 100},
      {std::nullopt, 4000, 0, 1000},
      {37, 4000, 100, 137},  // the engine's count wins over the bytes
      {0, 4000, std::nullopt, 1024},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(estimate_tokens(c.engine, c.bytes, c.cap), c.expected) << c.bytes;
  }
  EXPECT_EQ(estimate_tokens(std::nullopt, 8, std::nullopt, 256), 258u);
}

TEST(Estimate, Usd) {
  EXPECT_DOUBLE_EQ(estimate_usd(1'000'000, 0, 2.5, 10), 2.5);
  EXPECT_DOUBLE_EQ(estimate_usd(1000, 1024, 2.5, 10), (1000 * 2.5 + 1024 * 10) / 1e6);
  EXPECT_DOUBLE_EQ(estimate_usd(0, 0, 2.5, 10), 0);
}

TEST(Estimate, OutputCapScanner) {
  struct Case {
    const char* body;
    std::optional<uint64_t> cap;
  };
  const Case cases[] = {
      {R"({"max_tokens":100})", 100},
      {R"( { "model" : "m" , "max_tokens" : 7 } )", 7},
      {"{\n\t\"max_completion_tokens\":\r\n300\n}", 300},
      {R"({"max_output_tokens":64,"contents":[]})", 64},
      {R"({"max_tokens":200,"max_completion_tokens":300})", 300},  // the larger
      {R"({"messages":[{"content":"\"max_tokens\": 5"}],"max_tokens":7})", 7},
      {R"({"content":"\"max_tokens\": 5"})", std::nullopt},                // inside a string
      {R"({"x":"a\",\"max_tokens\":9"})", std::nullopt},                   // escaped quotes
      {R"({"x":"a\\","max_tokens":9})", 9},                                // an escaped backslash
      {R"({"a":{"max_tokens":5},"b":[{"max_tokens":6}]})", std::nullopt},  // nested
      {R"({"a":{"s":"}{]["},"max_tokens":8})", 8},
      {R"([{"max_tokens":5}])", std::nullopt},
      {R"({"max_tokens":null})", std::nullopt},
      {R"({"max_tokens":-1})", std::nullopt},
      {R"({"max_tokens":1.5})", std::nullopt},
      {R"({"max_tokens":1e3})", std::nullopt},
      {R"({"max_tokens":"5"})", std::nullopt},
      {R"({"max_\u0074okens":5})", std::nullopt},
      {R"({"max_tokens":5)", std::nullopt},  // truncated
      {R"({"max_tokens" 5})", std::nullopt},
      {R"({})", std::nullopt},
      {"", std::nullopt},
      {R"({"max_tokens":99999999999999999999})", std::nullopt},  // past uint64
  };
  for (const Case& c : cases) {
    EXPECT_EQ(output_cap(c.body), c.cap) << c.body;
  }
}

}  // namespace
}  // namespace rolter
