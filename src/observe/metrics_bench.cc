// What one update of a request-path instrument costs: a prometheus-cpp counter and histogram (one
// atomic, or one lock, for every thread) against their sharded forms (a cell per worker), on one
// thread and on several at once, each as its own worker.
//
//   build/src/observe/metrics_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only
#include <benchmark/benchmark.h>
#include <prometheus/counter.h>
#include <prometheus/histogram.h>

#include <vector>

#include "observe/sharded_series.h"
#include "observe/worker_cells.h"

namespace rolter {
namespace {

const std::vector<double> kBounds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                     1,     2.5,    5,     10,   30,    60,   120, 300};
constexpr int kMaxThreads = 4;

// Shared by every thread of one run, like a route's series by the workers.
struct Shared {
  WorkerCells cells{kMaxThreads};
  prometheus::Counter counter;
  prometheus::Histogram histogram{kBounds};
  ShardedCounter sharded_counter{cells, counter};
  ShardedHistogram sharded_histogram{cells, histogram, kBounds};
};

Shared& shared() {
  static Shared s;
  return s;
}

void BM_PrometheusCounter(benchmark::State& state) {
  for (auto _ : state) shared().counter.Increment();
}

void BM_ShardedCounter(benchmark::State& state) {
  WorkerCells::set_thread_slot(static_cast<unsigned>(state.thread_index()) + 1);
  for (auto _ : state) shared().sharded_counter.add();
}

void BM_PrometheusHistogram(benchmark::State& state) {
  double v = 0.003;
  for (auto _ : state) {
    shared().histogram.Observe(v);
    v = v < 100 ? v * 1.7 : 0.003;
  }
}

void BM_ShardedHistogram(benchmark::State& state) {
  WorkerCells::set_thread_slot(static_cast<unsigned>(state.thread_index()) + 1);
  double v = 0.003;
  for (auto _ : state) {
    shared().sharded_histogram.observe(v);
    v = v < 100 ? v * 1.7 : 0.003;
  }
}

BENCHMARK(BM_PrometheusCounter)->Threads(1)->Threads(2)->Threads(kMaxThreads);
BENCHMARK(BM_ShardedCounter)->Threads(1)->Threads(2)->Threads(kMaxThreads);
BENCHMARK(BM_PrometheusHistogram)->Threads(1)->Threads(2)->Threads(kMaxThreads);
BENCHMARK(BM_ShardedHistogram)->Threads(1)->Threads(2)->Threads(kMaxThreads);

}  // namespace
}  // namespace rolter
