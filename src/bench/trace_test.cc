#include "bench/trace.h"

#include <gtest/gtest.h>

#include <sstream>

namespace rolter::bench {
namespace {

TEST(TraceTest, ParsesAMooncakeLine) {
  auto r = parse_trace_line(
      R"({"timestamp": 27, "input_length": 1030, "output_length": 12, "hash_ids": [4, 5, 9]})",
      "t:1");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->timestamp_ms, 27);
  EXPECT_EQ(r->input_length, 1030u);
  EXPECT_EQ(r->output_length, 12u);
  EXPECT_EQ(r->hash_ids, (std::vector<uint64_t>{4, 5, 9}));
  EXPECT_EQ(r->full_blocks(), 2u);
  EXPECT_TRUE(r->session.empty());
}

TEST(TraceTest, MalformedLineNamesFileAndLine) {
  std::istringstream in(
      "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [1]}\n"
      "\n"
      "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [1\n");
  auto r = read_trace(in, "trace.jsonl");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "trace.jsonl:3: not valid JSON");
}

TEST(TraceTest, MissingAndWrongFieldsAreNamed) {
  auto missing = parse_trace_line(R"({"timestamp": 0, "output_length": 1, "hash_ids": []})", "f:2");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error(), "f:2: missing \"input_length\"");
  auto negative = parse_trace_line(
      R"({"timestamp": -1, "input_length": 1, "output_length": 1, "hash_ids": [1]})", "f:3");
  ASSERT_FALSE(negative);
  EXPECT_NE(negative.error().find("\"timestamp\""), std::string::npos);
  auto too_long = parse_trace_line(
      R"({"timestamp": 0, "input_length": 513, "output_length": 1, "hash_ids": [1]})", "f:4");
  ASSERT_FALSE(too_long);
  EXPECT_NE(too_long.error().find("exceeds"), std::string::npos);
}

TEST(TraceTest, LimitStopsEarly) {
  std::istringstream in(
      "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [1]}\n"
      "{\"timestamp\": 5, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [2]}\n"
      "this line is never read\n");
  auto r = read_trace(in, "t", 2);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->size(), 2u);
}

}  // namespace
}  // namespace rolter::bench
