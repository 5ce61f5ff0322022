#include "balance/evidence/latency_ewma.h"

#include <cmath>

namespace rolter {
namespace {

void update(std::atomic<double>& average, double sample) {
  double old = average.load(std::memory_order_relaxed);
  double next;
  do {
    next = std::isnan(old) ? sample : old + LatencyEwma::kAlpha * (sample - old);
  } while (!average.compare_exchange_weak(old, next, std::memory_order_relaxed));
}

}  // namespace

void LatencyEwma::record(double latency_ms, double queue_depth) {
  if (!std::isfinite(latency_ms) || latency_ms < 0) return;
  if (!std::isfinite(queue_depth) || queue_depth < 0) return;
  update(average_, latency_ms);
  update(per_place_, latency_ms / (queue_depth + 1));
  samples_.fetch_add(1, std::memory_order_relaxed);
}

std::optional<double> LatencyEwma::value() const {
  const double v = average_.load(std::memory_order_relaxed);
  if (std::isnan(v)) return std::nullopt;
  return v;
}

std::optional<double> LatencyEwma::at_queue(double queue_depth) const {
  const double v = per_place_.load(std::memory_order_relaxed);
  if (std::isnan(v) || !std::isfinite(queue_depth) || queue_depth < 0) return std::nullopt;
  return v * (queue_depth + 1);
}

}  // namespace rolter
