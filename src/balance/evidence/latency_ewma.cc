#include "balance/evidence/latency_ewma.h"

#include <cmath>

namespace rolter {

void LatencyEwma::record(double latency_ms) {
  if (!std::isfinite(latency_ms) || latency_ms < 0) return;
  double old = average_.load(std::memory_order_relaxed);
  double next;
  do {
    next = std::isnan(old) ? latency_ms : old + kAlpha * (latency_ms - old);
  } while (!average_.compare_exchange_weak(old, next, std::memory_order_relaxed));
  samples_.fetch_add(1, std::memory_order_relaxed);
}

std::optional<double> LatencyEwma::value() const {
  const double v = average_.load(std::memory_order_relaxed);
  if (std::isnan(v)) return std::nullopt;
  return v;
}

}  // namespace rolter
