#include "usage/usage_json.h"

#include <gtest/gtest.h>

namespace rolter {
namespace {

TEST(UsageJsonTest, RoundTripsABatch) {
  const std::vector<UsageRow> rows = {
      {{1'767'225'600'000, "ci", "ml", "qwen3", "Qwen/Qwen3-8B"},
       {.requests = 3,
        .input_tokens = 2400,
        .cached_input_tokens = 1024,
        .output_tokens = 180,
        .estimated = 1,
        .usd = 0.00042}},
      {{0, "", "", "r", "m"}, {}},
  };
  auto back = parse_usage_rows(usage_rows_json(rows));
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(*back, rows);
}

TEST(UsageJsonTest, AbsentNamesAndCountersAreEmptyAndZero) {
  auto rows = parse_usage_rows(R"({"rows":[{"hour_ms":3600000,"route":"r"}]})");
  ASSERT_TRUE(rows) << rows.error();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].key.route, "r");
  EXPECT_EQ((*rows)[0].key.key, "");
  EXPECT_EQ((*rows)[0].counts, UsageCounts{});
}

TEST(UsageJsonTest, RefusesWhatANodeCouldGetWrong) {
  const std::string long_name(kMaxUsageNameBytes + 1, 'k');
  const struct {
    std::string body;
    std::string error;  // the start of the error
  } kCases[] = {
      {"not json", "expected a JSON object"},
      {"[]", "expected a JSON object"},
      {R"({})", "rows: expected a list"},
      {R"({"rows":{}})", "rows: expected a list"},
      {R"({"rows":[1]})", "rows[0]: expected an object"},
      {R"({"rows":[{}]})", "rows[0].hour_ms: expected an integer"},
      {R"({"rows":[{"hour_ms":"0"}]})", "rows[0].hour_ms: expected an integer"},
      {R"({"rows":[{"hour_ms":1000}]})", "rows[0].hour_ms: expected the start of an hour"},
      {R"({"rows":[{"hour_ms":-3600000}]})", "rows[0].hour_ms: expected the start of an hour"},
      {R"({"rows":[{"hour_ms":0},{"hour_ms":0,"key":5}]})", "rows[1].key: expected a string"},
      {R"({"rows":[{"hour_ms":0,"model":")" + long_name + R"("}]})", "rows[0].model: longer"},
      {R"({"rows":[{"hour_ms":0,"requests":-1}]})", "rows[0].requests: expected an unsigned"},
      {R"({"rows":[{"hour_ms":0,"requests":1.5}]})", "rows[0].requests: expected an unsigned"},
      {R"({"rows":[{"hour_ms":0,"input_tokens":1e30}]})", "rows[0].input_tokens: expected"},
      {R"({"rows":[{"hour_ms":0,"input_tokens":1,"cached_input_tokens":2}]})",
       "rows[0].cached_input_tokens: more than input_tokens"},
      {R"({"rows":[{"hour_ms":0,"requests":1,"estimated":2}]})", "rows[0].estimated: more than"},
      {R"({"rows":[{"hour_ms":0,"usd":-0.5}]})", "rows[0].usd: expected a finite number"},
      {R"({"rows":[{"hour_ms":0,"usd":"1"}]})", "rows[0].usd: expected a finite number"},
  };
  for (const auto& c : kCases) {
    auto rows = parse_usage_rows(c.body);
    ASSERT_FALSE(rows) << c.body;
    EXPECT_EQ(rows.error().rfind(c.error, 0), 0u) << c.body << " -> " << rows.error();
  }
}

TEST(UsageJsonTest, RefusesMoreRowsThanANodeHolds) {
  std::string body = R"({"rows":[)";
  for (size_t i = 0; i <= kMaxUsageRows; ++i) body += i ? R"(,{"hour_ms":0})" : R"({"hour_ms":0})";
  body += "]}";
  auto rows = parse_usage_rows(body);
  ASSERT_FALSE(rows);
  EXPECT_EQ(rows.error().rfind("rows: more than", 0), 0u) << rows.error();
}

}  // namespace
}  // namespace rolter
