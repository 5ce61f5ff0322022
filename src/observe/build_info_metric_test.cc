#include <gtest/gtest.h>

#include <string>

#include "observe/metrics.h"

namespace rolter {
namespace {

class NoFleet : public FleetView {
 public:
  void for_each_instance(FunctionRef<void(const InstanceReading&)>) const override {}
  void for_each_adaptive_picks(FunctionRef<void(const AdaptivePicksReading&)>) const override {}
};

TEST(BuildInfoMetric, OneSeriesLabelledWithVersionCommitAndBuildType) {
  Metrics metrics;
  NoFleet fleet;
  EXPECT_EQ(metrics.render(fleet).find("rolter_build_info"), std::string::npos);
  metrics.set_build_info("0.1.0", "2f75b0a", "Release");
  const std::string text = metrics.render(fleet);
  EXPECT_NE(text.find("# TYPE rolter_build_info gauge"), std::string::npos) << text;
  EXPECT_NE(
      text.find(R"(rolter_build_info{build_type="Release",commit="2f75b0a",version="0.1.0"} 1)"),
      std::string::npos)
      << text;
}

}  // namespace
}  // namespace rolter
