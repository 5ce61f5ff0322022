#include "observe/sharded_series.h"

#include <gtest/gtest.h>
#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <memory>
#include <thread>
#include <vector>

#include "observe/series_table.h"
#include "observe/worker_cells.h"

namespace rolter {
namespace {

// Runs fn on a thread that has taken `slot`, as a worker thread does when it starts.
template <typename Fn>
void on_slot(unsigned slot, Fn fn) {
  std::thread([slot, &fn] {
    WorkerCells::set_thread_slot(slot);
    fn();
  }).join();
}

TEST(WorkerCellsTest, EachSlotWritesItsOwnSlabAndTheSumAddsThem) {
  WorkerCells cells(2);
  ASSERT_EQ(cells.slots(), 3u);
  const uint32_t run = cells.allocate(2);
  ASSERT_NE(run, WorkerCells::kNoCells);
  on_slot(1, [&] { cells.cell(WorkerCells::thread_slot(), run).fetch_add(5); });
  on_slot(2, [&] { cells.cell(WorkerCells::thread_slot(), run).fetch_add(7); });
  cells.cell(WorkerCells::thread_slot(), run + 1).fetch_add(1);  // this thread: slot 0
  EXPECT_EQ(cells.cell(1, run).load(), 5u);
  EXPECT_EQ(cells.cell(2, run).load(), 7u);
  EXPECT_EQ(cells.cell(0, run).load(), 0u);
  EXPECT_EQ(cells.sum(run), 12u);
  EXPECT_EQ(cells.sum(run + 1), 1u);
  // A slot beyond the slabs (a worker added by a later config) shares slot 0.
  cells.cell(9, run).fetch_add(1);
  EXPECT_EQ(cells.cell(0, run).load(), 1u);
}

TEST(WorkerCellsTest, SlotsOfOneCellAreAPageApart) {
  // Two workers counting the same series never write one cache line.
  WorkerCells cells(2);
  const uint32_t run = cells.allocate(1);
  const auto* a = reinterpret_cast<const char*>(&cells.cell(1, run));
  const auto* b = reinterpret_cast<const char*>(&cells.cell(2, run));
  EXPECT_GE(b - a, 64);
}

TEST(WorkerCellsTest, RunsStayInOneChunkAndAreReusedZeroed) {
  WorkerCells cells(1);
  const uint32_t first = cells.allocate(WorkerCells::kChunkCells - 3);
  const uint32_t second = cells.allocate(5);  // does not fit in the rest of the first chunk
  EXPECT_EQ(second, WorkerCells::kChunkCells);
  cells.cell(1, second + 4).fetch_add(9);
  cells.release(second, 5);
  const uint32_t again = cells.allocate(5);
  EXPECT_EQ(again, second);
  EXPECT_EQ(cells.sum(again + 4), 0u);  // the old instrument's count is gone
  EXPECT_NE(cells.allocate(3), first);
  EXPECT_EQ(cells.allocate(0), WorkerCells::kNoCells);
  EXPECT_EQ(cells.allocate(WorkerCells::kChunkCells + 1), WorkerCells::kNoCells);
}

TEST(WorkerCellsTest, FullSlabsSayNoCells) {
  WorkerCells cells(0);
  uint32_t last = 0;
  for (uint32_t i = 0; i < WorkerCells::kMaxChunks; ++i)
    last = cells.allocate(WorkerCells::kChunkCells);
  EXPECT_EQ(last, (WorkerCells::kMaxChunks - 1) * WorkerCells::kChunkCells);
  EXPECT_EQ(cells.allocate(1), WorkerCells::kNoCells);
}

TEST(ShardedCounterTest, FoldAddsOnlyWhatWasCountedSinceTheLastFold) {
  WorkerCells cells(2);
  prometheus::Counter series;
  ShardedCounter counter(cells, series);
  on_slot(1, [&] { counter.add(3); });
  on_slot(2, [&] { counter.add(); });
  EXPECT_EQ(counter.value(), 4u);
  EXPECT_EQ(series.Value(), 0);  // nothing shows before a fold
  counter.fold();
  EXPECT_EQ(series.Value(), 4);
  counter.fold();
  EXPECT_EQ(series.Value(), 4);  // folding again adds nothing
  on_slot(1, [&] { counter.add(2); });
  counter.fold();
  EXPECT_EQ(series.Value(), 6);
}

TEST(ShardedCounterTest, ManyThreadsOnOneSlotLoseNoCount) {
  // Slot 0 is shared by every thread that is not a worker.
  WorkerCells cells(1);
  prometheus::Counter series;
  ShardedCounter counter(cells, series);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) counter.add();
    });
  }
  for (auto& t : threads) t.join();
  counter.fold();
  EXPECT_EQ(series.Value(), 40000);
}

TEST(ShardedHistogramTest, BucketsAndSumMatchPrometheusOwnObserve) {
  const std::vector<double> bounds = {0.01, 0.1, 1};
  WorkerCells cells(2);
  prometheus::Histogram series(bounds);
  prometheus::Histogram reference(bounds);
  ShardedHistogram histogram(cells, series, bounds);
  const std::vector<double> values = {0.005, 0.01, 0.05, 0.1, 0.5, 2, 7};
  on_slot(1, [&] {
    for (size_t i = 0; i < values.size(); i += 2) histogram.observe(values[i]);
  });
  on_slot(2, [&] {
    for (size_t i = 1; i < values.size(); i += 2) histogram.observe(values[i]);
  });
  for (double v : values) reference.Observe(v);
  EXPECT_EQ(histogram.count(), values.size());
  histogram.fold();
  const auto got = series.Collect().histogram;
  const auto want = reference.Collect().histogram;
  EXPECT_EQ(got.sample_count, want.sample_count);
  EXPECT_NEAR(got.sample_sum, want.sample_sum, 1e-12);
  ASSERT_EQ(got.bucket.size(), want.bucket.size());
  for (size_t b = 0; b < want.bucket.size(); ++b) {
    EXPECT_EQ(got.bucket[b].cumulative_count, want.bucket[b].cumulative_count) << "bucket " << b;
  }
  // A second fold adds only the new observation.
  on_slot(1, [&] { histogram.observe(0.02); });
  histogram.fold();
  reference.Observe(0.02);
  const auto again = series.Collect().histogram;
  EXPECT_EQ(again.sample_count, values.size() + 1);
  EXPECT_NEAR(again.sample_sum, reference.Collect().histogram.sample_sum, 1e-12);
  EXPECT_EQ(again.bucket[1].cumulative_count,
            reference.Collect().histogram.bucket[1].cumulative_count);
}

TEST(ShardedHistogramTest, WithoutCellsItObservesIntoTheSeries) {
  WorkerCells cells(0);
  while (cells.allocate(WorkerCells::kChunkCells) != WorkerCells::kNoCells) {
  }
  prometheus::Histogram series({1});
  ShardedHistogram histogram(cells, series, {1});
  prometheus::Counter counter_series;
  ShardedCounter counter(cells, counter_series);
  histogram.observe(0.5);
  counter.add(2);
  EXPECT_EQ(series.Collect().histogram.sample_count, 1u);
  EXPECT_EQ(counter_series.Value(), 2);
  EXPECT_EQ(histogram.count(), 1u);
  EXPECT_EQ(counter.value(), 2u);
}

TEST(SeriesTableShardedTest, TheSameSeriesLeasedTwiceSharesItsInstrumentUntilTheLastLease) {
  auto registry = std::make_shared<prometheus::Registry>();
  auto table = std::make_shared<SeriesTable>(registry, 2);
  auto& family = prometheus::BuildCounter().Name("c_total").Help("h").Register(*registry);
  SeriesLease first;
  SeriesLease second;
  ShardedCounter& a = table->lease_sharded(family, {{"route", "m"}}, first);
  ShardedCounter& b = table->lease_sharded(family, {{"route", "m"}}, second);
  EXPECT_EQ(&a, &b);
  on_slot(1, [&] { a.add(2); });
  table->fold();
  EXPECT_EQ(family.Add({{"route", "m"}}).Value(), 2);
  first.release();
  EXPECT_TRUE(family.Has({{"route", "m"}}));
  second.release();
  EXPECT_FALSE(family.Has({{"route", "m"}}));
  EXPECT_EQ(table->size(), 0u);
}

}  // namespace
}  // namespace rolter
