#include "balance/evidence/latency_predictor.h"

#include <algorithm>
#include <cmath>

namespace rolter {

void LatencyPredictor::record(double queue_depth, double prompt_ktokens, double latency_ms,
                              double queued_prefill_ktokens) {
  if (!std::isfinite(queue_depth) || !std::isfinite(prompt_ktokens) || !std::isfinite(latency_ms) ||
      !std::isfinite(queued_prefill_ktokens)) {
    return;
  }
  const double x[kFeatures] = {1.0, queue_depth, prompt_ktokens, queued_prefill_ktokens};
  MutexLock lock(update_mu_);
  double w[kFeatures];
  double predicted = 0;
  double norm = kEpsilon;
  for (size_t i = 0; i < kFeatures; ++i) {
    w[i] = w_[i].load(std::memory_order_relaxed);
    predicted += w[i] * x[i];
    norm += x[i] * x[i];
  }
  // NLMS: a step of kStep along x, scaled by |x|², so the step size does not depend on how large
  // the queue or the prompt is.
  const double error = latency_ms - predicted;
  for (size_t i = 0; i < kFeatures; ++i) {
    const double next = w[i] + kStep * error * x[i] / norm;
    // The intercept may go either way; the other coefficients never go below 0: a deeper queue,
    // a longer prompt or more prefill queued ahead must never predict a shorter wait
    // (SPEC §6.16), or the model would rank the busiest candidate best and send it more.
    const double floor = i == 0 ? -kClampMs : 0.0;
    w_[i].store(std::clamp(next, floor, kClampMs), std::memory_order_relaxed);
  }
  samples_.fetch_add(1, std::memory_order_relaxed);
}

std::optional<double> LatencyPredictor::predict(double queue_depth, double prompt_ktokens,
                                                double queued_prefill_ktokens) const {
  if (samples_.load(std::memory_order_relaxed) < kMinSamples) return std::nullopt;
  const double value = w_[0].load(std::memory_order_relaxed) +
                       w_[1].load(std::memory_order_relaxed) * queue_depth +
                       w_[2].load(std::memory_order_relaxed) * prompt_ktokens +
                       w_[3].load(std::memory_order_relaxed) * queued_prefill_ktokens;
  if (!std::isfinite(value)) return std::nullopt;
  return std::max(0.0, value);
}

}  // namespace rolter
