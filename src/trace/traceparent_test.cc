#include "trace/traceparent.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace rolter {
namespace {

constexpr std::string_view kValid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

std::string hex_of(const TraceId& id) {
  char out[32];
  write_hex(id, out);
  return std::string(out, sizeof out);
}

std::string hex_of(const SpanId& id) {
  char out[16];
  write_hex(id, out);
  return std::string(out, sizeof out);
}

TEST(Traceparent, ReadsAValidValue) {
  const auto parent = parse_traceparent(kValid);
  ASSERT_TRUE(parent);
  EXPECT_EQ(hex_of(parent->trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(hex_of(parent->parent_id), "00f067aa0ba902b7");
  EXPECT_TRUE(parent->sampled());
  EXPECT_FALSE(
      parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")->sampled());
}

// Trace Context §3.2 and its test suite's cases, one row each.
TEST(Traceparent, Rules) {
  struct Case {
    std::string_view value;
    bool valid;
    std::string_view why;
  };
  const Case cases[] = {
      {kValid, true, "the specification's example"},
      {"  00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\t", true, "optional whitespace"},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-09", true, "unknown flags ignored"},
      {"", false, "empty"},
      {"00", false, "too short"},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0", false, "54 characters"},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-", false, "version 00 is 55"},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-010", false, "version 00 longer"},
      {"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", false, "uppercase trace id"},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01", false, "uppercase parent id"},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0A", false, "uppercase flags"},
      {"0A-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false, "uppercase version"},
      {"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false, "version ff"},
      {"00-00000000000000000000000000000000-00f067aa0ba902b7-01", false, "zero trace id"},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false, "zero parent id"},
      {"00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false, "bad separator 1"},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01", false, "bad separator 2"},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7_01", false, "bad separator 3"},
      {"00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01", false, "non-hex trace id"},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902bx-01", false, "non-hex parent id"},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0x", false, "non-hex flags"},
      {"0x-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false, "non-hex version"},
      {"00-4bf92f3577b34da6a3ce929d0e0e47-3600f067aa0ba902b7-01", false, "fields shifted"},
      {"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", true, "a later version"},
      {"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-comes", true,
       "a later version's extra fields"},
      {"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x", false,
       "a later version without '-' after 55"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(parse_traceparent(c.value).has_value(), c.valid) << c.why << ": " << c.value;
  }
}

TEST(Traceparent, FormatsVersion00AndReadsItBack) {
  const auto parent = parse_traceparent(kValid);
  ASSERT_TRUE(parent);
  SpanId mine;
  for (size_t i = 0; i < mine.bytes.size(); ++i) mine.bytes[i] = static_cast<uint8_t>(0xa0 + i);
  char out[kTraceparentLength];
  format_traceparent(parent->trace_id, mine, true, out);
  EXPECT_EQ(std::string_view(out, sizeof out),
            "00-4bf92f3577b34da6a3ce929d0e0e4736-a0a1a2a3a4a5a6a7-01");
  format_traceparent(parent->trace_id, mine, false, out);
  const auto back = parse_traceparent(std::string_view(out, sizeof out));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->trace_id, parent->trace_id);
  EXPECT_EQ(back->parent_id, mine);
  EXPECT_FALSE(back->sampled());
}

TEST(TraceIds, RandomIdsAreNeverZero) {
  // A source that first yields zeros: the generators draw again.
  struct Zeros final : Random {
    int left = 4;
    uint64_t next_u64() override { return left-- > 0 ? 0 : 0x0123456789abcdefULL; }
  } zeros;
  EXPECT_FALSE(random_trace_id(zeros).is_zero());
  zeros.left = 4;
  EXPECT_FALSE(random_span_id(zeros).is_zero());
}

}  // namespace
}  // namespace rolter
