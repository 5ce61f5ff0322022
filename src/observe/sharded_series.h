// ShardedCounter and ShardedHistogram: the request path's counters and histograms, written by each
// worker into its own cells (observe/worker_cells.h) and added into their Prometheus series when
// /metrics is rendered.
//
// A prometheus-cpp counter is one atomic that every worker adds to, and a histogram takes a lock
// on every observation: with several workers serving one route, each request bounced their cache
// lines between cores. Here an update is a relaxed add on a cell of the calling worker's own slab,
// and fold() (run by SeriesTable::fold() before the registry is read) adds to the Prometheus
// series what the cells gained since the last fold. /metrics shows the same names, labels and
// values as before; values are as of the render.
//
// Both are made by SeriesTable::lease_sharded() and live as long as their series is leased. When
// the slabs are full (never with a real configuration) an instrument writes its Prometheus series
// directly, as before, and loses nothing.
//
//   ShardedCounter& retries = table->lease_sharded(family, {{"route", "m"}}, lease);
//   retries.add();          // on a worker: its own cell
//   table->fold();          // before Collect(): the series gains what the cells gained
//
// Thread-safety: add() and observe() from any thread; fold() by one thread at a time (the
// table's lock); value(), count() and sum() from any thread.
#pragma once

#include <cstdint>
#include <vector>

#include "observe/worker_cells.h"

namespace prometheus {
class Counter;
class Histogram;
}  // namespace prometheus

namespace rolter {

// What SeriesTable keeps of a sharded instrument, to fold it and to destroy it.
class ShardedSeries {
 public:
  virtual ~ShardedSeries() = default;
  // Adds to the Prometheus series what the cells gained since the last fold.
  virtual void fold() = 0;
};

class ShardedCounter final : public ShardedSeries {
 public:
  ShardedCounter(WorkerCells& cells, prometheus::Counter& series);
  ~ShardedCounter() override;

  void add(uint64_t n = 1) {
    if (cell_ == WorkerCells::kNoCells) return add_to_series(n);
    cells_.cell(WorkerCells::thread_slot(), cell_).fetch_add(n, std::memory_order_relaxed);
  }
  // Everything added so far, folded or not.
  uint64_t value() const;
  // What the threads of `slot` added (WorkerCells::thread_slot()).
  uint64_t value_in(unsigned slot) const;

  void fold() override;

 private:
  void add_to_series(uint64_t n);

  WorkerCells& cells_;
  prometheus::Counter& series_;
  const uint32_t cell_;
  uint64_t folded_ = 0;
};

class ShardedHistogram final : public ShardedSeries {
 public:
  // `bounds`: the upper bounds of the buckets, ascending, as the series was made with (the last,
  // +Inf, bucket is implied).
  ShardedHistogram(WorkerCells& cells, prometheus::Histogram& series, std::vector<double> bounds);
  ~ShardedHistogram() override;

  // Counts `value` in the first bucket whose bound is at least `value`, as prometheus-cpp does.
  void observe(double value);
  // Observations and their sum so far, folded or not.
  uint64_t count() const;
  double sum() const;
  // What the threads of `slot` observed (WorkerCells::thread_slot()).
  uint64_t count_in(unsigned slot) const;

  void fold() override;

 private:
  // Cells: one per bucket (+Inf last), then the sum's bits.
  uint32_t buckets() const { return static_cast<uint32_t>(bounds_.size()) + 1; }

  WorkerCells& cells_;
  prometheus::Histogram& series_;
  const std::vector<double> bounds_;
  const uint32_t first_;
  std::vector<uint64_t> folded_counts_;  // per bucket, as of the last fold
  double folded_sum_ = 0;
};

}  // namespace rolter
