#include "balance/policy/policy_thresholds.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace rolter {
namespace {

TEST(PolicyThresholdsTest, ParsesTargetRanges) {
  EXPECT_EQ(parse_target_range("2..5").value(), (std::vector<size_t>{2, 3, 4, 5}));
  EXPECT_EQ(parse_target_range("4").value(), (std::vector<size_t>{4}));
  EXPECT_EQ(parse_target_range("3..3").value(), (std::vector<size_t>{3}));
}

TEST(PolicyThresholdsTest, RejectsBadTargetRanges) {
  struct Case {
    std::string input;
    std::string message;  // a part of the error
  };
  const std::vector<Case> cases = {
      {"1..4", "outside 2..64"},       {"2..65", "outside 2..64"},      {"8..2", "runs backwards"},
      {"two", "not a whole number"},   {"2..", "not a whole number"},   {"", "not a whole number"},
      {"2...8", "not a whole number"}, {"-2..3", "not a whole number"},
  };
  for (const Case& c : cases) {
    auto parsed = parse_target_range(c.input);
    ASSERT_FALSE(parsed.has_value()) << c.input;
    EXPECT_NE(parsed.error().find(c.message), std::string::npos)
        << c.input << ": " << parsed.error();
    EXPECT_EQ(parsed.error().find("--"), std::string::npos) << "the caller names the source";
  }
}

TEST(PolicyThresholdsTest, ParsesRatios) {
  const auto ratios = parse_ratios("1:1, 1.5:1,2:0.5").value();
  ASSERT_EQ(ratios.size(), 3u);
  EXPECT_EQ(ratios[1].least_inflight, 1.5);
  EXPECT_EQ(ratios[1].session_affinity, 1);
  EXPECT_EQ(ratio_label(ratios[1]), "1.5:1");
  EXPECT_EQ(ratio_label(ratios[2]), "2:0.5");
}

TEST(PolicyThresholdsTest, RejectsBadRatios) {
  const std::vector<std::string> inputs = {"",     "1",   "1:",   ":1",    "1:0",   "0:1",
                                           "-1:1", "a:b", "1:1,", "1:1:1", "inf:1", "nan:1"};
  for (const std::string& input : inputs) {
    auto parsed = parse_ratios(input);
    ASSERT_FALSE(parsed.has_value()) << input;
    EXPECT_FALSE(parsed.error().empty()) << input;
    EXPECT_EQ(parsed.error().find("--"), std::string::npos) << "the caller names the source";
  }
}

TEST(PolicyThresholdsTest, RendersTheTable) {
  // Values from balance/policy/flip_threshold_test.cc's hand derivation.
  const auto rows = compute_thresholds({2, 3, 4, 5}, {{1, 1}, {1.5, 1}});
  EXPECT_EQ(render_threshold_table(rows),
            "targets  1:1           1.5:1\n"
            "2        2 (tie at 1)  1\n"
            "3        3 (tie at 2)  1\n"
            "4        6             2\n"
            "5        never         3\n");
}

TEST(PolicyThresholdsTest, RendersJson) {
  const auto rows = compute_thresholds({2, 5}, {{1, 1}});
  const auto json = nlohmann::json::parse(render_threshold_json(rows));
  ASSERT_EQ(json.size(), 2u);
  EXPECT_EQ(json[0]["targets"], 2);
  EXPECT_EQ(json[0]["ratio"], "1:1");
  EXPECT_EQ(json[0]["least_inflight_weight"], 1.0);
  EXPECT_EQ(json[0]["flip"], 2);
  EXPECT_EQ(json[0]["tie_at"], 1);
  EXPECT_TRUE(json[1]["flip"].is_null());
  EXPECT_TRUE(json[1]["tie_at"].is_null());
}

}  // namespace
}  // namespace rolter
