// LatencyPredictor: one instance's latency model for `predicted_latency` (SPEC §6.11).
//
//   latency_ms ≈ w0 + w1 · queue_depth + w2 · prompt_ktokens + w3 · queued_prefill_ktokens
//
// queued_prefill_ktokens is the prefill this gateway has sent the instance that has not produced a
// first token yet (LoadSignals::prefill_tokens), in thousands of tokens. The in-flight count alone
// cannot tell a request still prefilling a 70,000-token prompt from one decoding a short answer,
// and at low rates (0-2 requests per engine) that difference is the whole wait: without w3,
// predicted_latency sat at round_robin's TTFT p99 limit on the conversation trace
// (docs/benchmarks.md, "No herding"). It is 0 where the gateway counts none (a sample recorded
// without it), and then w3 learns nothing.
//
// learned online by normalised least mean squares (step 0.15, ε 1e-3), one update per completed
// successful request, every coefficient clamped to ±600,000 ms so no single sample (a stalled
// request, a clock jump) can throw the model out of range, and w1, w2 to [0, 600,000]: a deeper
// queue or a longer prompt never predicts a shorter wait (SPEC §6.16). Below 8 samples it predicts
// nothing: a new instance is unknown, not slow.
//
// Lives in the LoadTracker's per-instance state, so it survives reloads (SPEC §5).
// Thread-safety: predict() is lock-free and may run on every worker at once (it reads the three
// coefficients as separate relaxed atomics; a read that straddles an update mixes two adjacent
// models, which differ by one small step). record() serialises updates with a per-instance mutex;
// it runs once per completed request, after the response, off the pick path.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "common/mutex.h"

namespace rolter {

class LatencyPredictor {
 public:
  static constexpr double kStep = 0.15;
  static constexpr double kEpsilon = 1e-3;
  static constexpr double kClampMs = 600'000;
  static constexpr uint64_t kMinSamples = 8;
  static constexpr size_t kFeatures = 4;  // 1, queue depth, prompt, queued prefill

  // One completed successful request: the queue depth it saw before its own increment, its prompt
  // size in thousands of tokens, its latency, and the prefill queued ahead of it when it was sent.
  // A sample with a non-finite input is ignored.
  void record(double queue_depth, double prompt_ktokens, double latency_ms,
              double queued_prefill_ktokens = 0) EXCLUDES(update_mu_);
  // The predicted latency in ms (never negative), or nullopt below kMinSamples.
  std::optional<double> predict(double queue_depth, double prompt_ktokens,
                                double queued_prefill_ktokens = 0) const;
  uint64_t samples() const { return samples_.load(std::memory_order_relaxed); }

 private:
  // Serialises record()'s read-modify-write of the coefficients. It guards no plain state:
  // predict() reads the atomics without it.
  Mutex update_mu_;
  std::atomic<double> w_[kFeatures] = {0, 0, 0, 0};
  std::atomic<uint64_t> samples_{0};
};

}  // namespace rolter
