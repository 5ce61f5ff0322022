#include "observe/series_table.h"

#include <gtest/gtest.h>
#include <prometheus/counter.h>
#include <prometheus/registry.h>

#include <memory>
#include <string>

#include "observe/metrics.h"

namespace rolter {
namespace {

class NoFleet : public FleetView {
 public:
  void for_each_instance(FunctionRef<void(const InstanceReading&)>) const override {}
  void for_each_adaptive_picks(FunctionRef<void(const AdaptivePicksReading&)>) const override {}
};

struct TableTest : ::testing::Test {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  prometheus::Family<prometheus::Counter>& family =
      prometheus::BuildCounter().Name("c_total").Help("c").Register(*registry);
  std::shared_ptr<SeriesTable> table = std::make_shared<SeriesTable>(registry);

  bool has(const std::string& route) const { return family.Has({{"route", route}}); }
};

TEST_F(TableTest, ASeriesStaysWhileAnyLeaseHoldsIt) {
  SeriesLease old_snapshot;
  SeriesLease new_snapshot;
  prometheus::Counter& a = table->lease(family, {{"route", "a"}}, old_snapshot);
  table->lease(family, {{"route", "gone"}}, old_snapshot);
  a.Increment(3);
  // The new snapshot takes what stays before the old one is released.
  prometheus::Counter& a_again = table->lease(family, {{"route", "a"}}, new_snapshot);
  EXPECT_EQ(&a, &a_again);
  EXPECT_EQ(table->size(), 2u);
  old_snapshot.release();
  EXPECT_TRUE(has("a"));
  EXPECT_FALSE(has("gone"));
  EXPECT_EQ(a_again.Value(), 3) << "the series that stays keeps its count";
  new_snapshot = SeriesLease();  // assignment releases what it held
  EXPECT_FALSE(has("a"));
  EXPECT_EQ(table->size(), 0u);
}

TEST_F(TableTest, ALeaseHoldingASeriesTwiceReleasesItOnce) {
  SeriesLease lease;
  table->lease(family, {{"route", "a"}}, lease);
  table->lease(family, {{"route", "a"}}, lease);  // two candidates of one target
  EXPECT_EQ(lease.size(), 2u);
  SeriesLease other;
  table->lease(family, {{"route", "a"}}, other);
  lease.release();
  EXPECT_TRUE(has("a"));
  other.release();
  EXPECT_FALSE(has("a"));
}

TEST_F(TableTest, AMoveCarriesTheLeases) {
  SeriesLease first;
  table->lease(family, {{"route", "a"}}, first);
  SeriesLease moved(std::move(first));
  EXPECT_TRUE(first.empty());
  first.release();  // holds nothing any more
  EXPECT_TRUE(has("a"));
  SeriesLease assigned;
  assigned = std::move(moved);
  moved.release();
  EXPECT_TRUE(has("a"));
  assigned.release();
  EXPECT_FALSE(has("a"));
}

// A lease keeps the table and the registry alive: one released after its Metrics is gone (a
// snapshot that outlives the process's Metrics at exit) touches nothing freed. ASan checks it.
TEST(SeriesLeaseTest, MayOutliveTheMetricsThatMadeIt) {
  SeriesLease lease;
  {
    Metrics metrics;
    Metrics::count_retry(metrics.route("m", lease));
  }
  lease.release();
}

// Metrics' instruments are leased: a route nobody holds leaves the exposition, one still held
// stays with its counts.
TEST(SeriesLeaseTest, MetricsSeriesLeaveWithTheirLastLease) {
  Metrics metrics;
  NoFleet fleet;
  SeriesLease old_snapshot;
  Metrics::count_retry(metrics.route("kept", old_snapshot));
  Metrics::count_pick(metrics.candidate("removed", "random", "p/m", old_snapshot));
  SeriesLease new_snapshot;
  metrics.route("kept", new_snapshot);
  old_snapshot.release();
  const std::string text = metrics.render(fleet);
  EXPECT_NE(text.find("rolter_retries_total{route=\"kept\"} 1\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("route=\"removed\""), std::string::npos) << text;
}

}  // namespace
}  // namespace rolter
