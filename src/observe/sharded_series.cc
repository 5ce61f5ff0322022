#include "observe/sharded_series.h"

#include <prometheus/counter.h>
#include <prometheus/histogram.h>

#include <algorithm>
#include <bit>

namespace rolter {

ShardedCounter::ShardedCounter(WorkerCells& cells, prometheus::Counter& series)
    : cells_(cells), series_(series), cell_(cells.allocate(1)) {}

ShardedCounter::~ShardedCounter() { cells_.release(cell_, 1); }

void ShardedCounter::add_to_series(uint64_t n) { series_.Increment(static_cast<double>(n)); }

uint64_t ShardedCounter::value() const {
  if (cell_ == WorkerCells::kNoCells) return static_cast<uint64_t>(series_.Value());
  return cells_.sum(cell_);
}

uint64_t ShardedCounter::value_in(unsigned slot) const {
  if (cell_ == WorkerCells::kNoCells || slot >= cells_.slots()) return 0;
  return cells_.cell(slot, cell_).load(std::memory_order_relaxed);
}

void ShardedCounter::fold() {
  if (cell_ == WorkerCells::kNoCells) return;
  const uint64_t now = cells_.sum(cell_);
  if (now > folded_) series_.Increment(static_cast<double>(now - folded_));
  folded_ = now;
}

ShardedHistogram::ShardedHistogram(WorkerCells& cells, prometheus::Histogram& series,
                                   std::vector<double> bounds)
    : cells_(cells),
      series_(series),
      bounds_(std::move(bounds)),
      first_(cells.allocate(buckets() + 1)),
      folded_counts_(buckets(), 0) {}

ShardedHistogram::~ShardedHistogram() { cells_.release(first_, buckets() + 1); }

void ShardedHistogram::observe(double value) {
  if (first_ == WorkerCells::kNoCells) return series_.Observe(value);
  const auto bucket = static_cast<uint32_t>(
      std::find_if(bounds_.begin(), bounds_.end(), [value](double b) { return b >= value; }) -
      bounds_.begin());
  const unsigned slot = WorkerCells::thread_slot();
  cells_.cell(slot, first_ + bucket).fetch_add(1, std::memory_order_relaxed);
  // The sum is a double kept in a cell's bits. A worker's slot has one writer, so the exchange
  // succeeds at once; slot 0's writers may retry.
  auto& sum = cells_.cell(slot, first_ + buckets());
  uint64_t old = sum.load(std::memory_order_relaxed);
  while (!sum.compare_exchange_weak(old,
                                    std::bit_cast<uint64_t>(std::bit_cast<double>(old) + value),
                                    std::memory_order_relaxed)) {
  }
}

uint64_t ShardedHistogram::count() const {
  if (first_ == WorkerCells::kNoCells) {
    return static_cast<uint64_t>(series_.Collect().histogram.sample_count);
  }
  uint64_t total = 0;
  for (uint32_t b = 0; b < buckets(); ++b) total += cells_.sum(first_ + b);
  return total;
}

uint64_t ShardedHistogram::count_in(unsigned slot) const {
  if (first_ == WorkerCells::kNoCells || slot >= cells_.slots()) return 0;
  uint64_t total = 0;
  for (uint32_t b = 0; b < buckets(); ++b) {
    total += cells_.cell(slot, first_ + b).load(std::memory_order_relaxed);
  }
  return total;
}

double ShardedHistogram::sum() const {
  if (first_ == WorkerCells::kNoCells) return series_.Collect().histogram.sample_sum;
  double total = 0;
  for (unsigned slot = 0; slot < cells_.slots(); ++slot) {
    total += std::bit_cast<double>(
        cells_.cell(slot, first_ + buckets()).load(std::memory_order_relaxed));
  }
  return total;
}

void ShardedHistogram::fold() {
  if (first_ == WorkerCells::kNoCells) return;
  std::vector<double> increments(buckets(), 0);
  bool any = false;
  for (uint32_t b = 0; b < buckets(); ++b) {
    const uint64_t now = cells_.sum(first_ + b);
    if (now > folded_counts_[b]) {
      increments[b] = static_cast<double>(now - folded_counts_[b]);
      any = true;
    }
    folded_counts_[b] = now;
  }
  const double now_sum = sum();
  if (any || now_sum != folded_sum_) series_.ObserveMultiple(increments, now_sum - folded_sum_);
  folded_sum_ = now_sum;
}

}  // namespace rolter
