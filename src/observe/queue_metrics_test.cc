#include "observe/queue_metrics.h"

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include <string>

#include "observe/metrics.h"

namespace rolter {
namespace {

// The sample of `family` whose labels include every pair of `labels`, as text "value", or "" when
// there is none.
std::string sample(Metrics& metrics, const std::string& family,
                   const std::map<std::string, std::string>& labels) {
  for (const auto& f : metrics.collect()) {
    if (f.name != family) continue;
    for (const auto& m : f.metric) {
      size_t matched = 0;
      for (const auto& l : m.label) {
        auto it = labels.find(l.name);
        if (it != labels.end() && it->second == l.value) ++matched;
      }
      if (matched != labels.size()) continue;
      const double v = f.type == prometheus::MetricType::Counter ? m.counter.value : m.gauge.value;
      return std::to_string(static_cast<int>(v));
    }
  }
  return "";
}

TEST(QueueSeries, MadeOnFirstUse) {
  Metrics metrics;
  QueueMetrics families(metrics.registry(), metrics.series_table());
  const auto chat = families.series("chat");
  EXPECT_EQ(sample(metrics, "rolter_queue_depth", {{"route", "chat"}}), "");
  chat->set_depth(4, 3);
  chat->count_shed(1, "full");
  chat->count_shed(1, "full");
  chat->count_shed(1, "no such reason");
  EXPECT_EQ(sample(metrics, "rolter_queue_depth", {{"route", "chat"}, {"band", "4"}}), "3");
  EXPECT_EQ(sample(metrics, "rolter_shed_total", {{"route", "chat"}, {"band", "1"}, {"reason", "full"}}),
            "2");
  EXPECT_EQ(sample(metrics, "rolter_shed_total", {{"route", "chat"}, {"band", "1"}, {"reason", "expired"}}),
            "");
}

// A reload that keeps the route: the new snapshot's series adopt the old ones' and counts go on.
// One that removes it: the series leave once the last snapshot's go.
TEST(QueueSeries, AdoptedAcrossAReloadAndGoneWithTheLastSnapshot) {
  Metrics metrics;
  QueueMetrics families(metrics.registry(), metrics.series_table());
  auto before = families.series("chat");
  before->count_shed(4, "expired");
  before->count_dispatch("team-a");
  before->observe_wait(0.2);
  auto after = families.series("chat");
  after->adopt(*before);
  before.reset();
  EXPECT_EQ(sample(metrics, "rolter_shed_total", {{"route", "chat"}, {"band", "4"}, {"reason", "expired"}}),
            "1");
  EXPECT_EQ(sample(metrics, "rolter_queue_dispatches_total", {{"route", "chat"}, {"tenant", "team-a"}}),
            "1");
  after->count_shed(4, "expired");
  EXPECT_EQ(sample(metrics, "rolter_shed_total", {{"route", "chat"}, {"band", "4"}, {"reason", "expired"}}),
            "2");

  const auto other = families.series("other");
  other->set_depth(0, 1);
  after.reset();
  for (const char* family : {"rolter_shed_total", "rolter_queue_dispatches_total",
                             "rolter_queue_wait_seconds", "rolter_queue_depth"}) {
    for (const auto& f : metrics.collect()) {
      if (f.name != family) continue;
      for (const auto& m : f.metric) {
        for (const auto& l : m.label) EXPECT_FALSE(l.name == "route" && l.value == "chat") << family;
      }
    }
  }
  EXPECT_EQ(sample(metrics, "rolter_queue_depth", {{"route", "other"}, {"band", "0"}}), "1");
}

}  // namespace
}  // namespace rolter
