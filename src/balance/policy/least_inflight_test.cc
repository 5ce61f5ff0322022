#include "balance/policy/least_inflight.h"

#include <gtest/gtest.h>

#include <vector>

#include "balance/testing/loads_fixture.h"

namespace rolter {
namespace {

TEST(LeastInflightPluginTest, ScoresOneOverOnePlusInflight) {
  struct Case {
    uint32_t load;
    bool eligible;
    double score;
  };
  const std::vector<Case> cases = {
      {0, true, 1.0}, {1, true, 0.5},     {3, true, 0.25},
      {9, true, 0.1}, {999, true, 0.001}, {0, false, 0.0},  // ineligible: no score
  };
  std::vector<uint32_t> load_values;
  for (const Case& c : cases) load_values.push_back(c.load);
  LoadsFixture loads(load_values);
  std::vector<double> out(cases.size(), -1);
  LeastInflightPlugin plugin;
  const double multiplier = plugin.vote(
      {}, loads.view(), [&](size_t i) { return cases[i].eligible; }, out);
  EXPECT_EQ(multiplier, 1.0);
  EXPECT_EQ(plugin.name(), "least_inflight");
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_DOUBLE_EQ(out[i], cases[i].score) << "load " << cases[i].load;
  }
}

}  // namespace
}  // namespace rolter
