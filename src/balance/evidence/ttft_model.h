// TtftModel: one instance's time-to-first-token model for `kv_cost` (SPEC §6.14).
//
//   ttft_ms ≈ c + b · queue_depth + d · queued_prefill_ktokens + a · uncached_ktokens
//
// queue_depth is the instance's load (requests); queued_prefill_ktokens the prompt tokens this
// gateway sent it that it had not prefilled yet; uncached_ktokens the request's own prefill there.
//
// learned online by recursive least squares with a forgetting factor of kForget (an effective
// memory of about 2,000 requests, so the model follows an engine that changes), one update per
// completed successful request. Least squares rather than the normalised LMS of
// predicted_latency: prompts range over three orders of magnitude, and LMS, whose steps scale
// with the largest feature, leaves the intercept and queue cost unlearned for thousands of
// samples, and leaves identical engines with models far apart. RLS converges on linear data in a
// few dozen samples whatever the feature scales.
//
// Costs are physical: a, b and d below 0 (noise, or a queue that never formed) are read as 0 when
// predicting, so a busy or cold engine never looks cheaper for being busy or cold. Every
// coefficient is clamped to ±600,000 ms, the covariance is bounded (its trace at most kMaxTrace,
// so a feature that never varies cannot make it explode under forgetting), and non-finite samples
// are ignored. Below kMinSamples it predicts nothing: a new instance is unknown, not slow.
//
// Lives in the LoadTracker's per-instance state (InstanceEvidence), so it survives reloads.
// Thread-safety: predict() is lock-free and may run on every worker at once (three relaxed atomic
// coefficients; a read that straddles an update mixes two adjacent models). record() serialises
// updates with a per-instance mutex; it runs once per completed request, off the pick path.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>

#include "common/mutex.h"

namespace rolter {

class TtftModel {
 public:
  static constexpr double kForget = 0.9995;
  static constexpr double kInitialCovariance = 1e6;
  static constexpr double kMaxTrace = 1e8;
  static constexpr double kClampMs = 600'000;
  static constexpr uint64_t kMinSamples = 8;

  TtftModel();

  static constexpr int kFeatures = 4;  // 1, queue, queued prefill, uncached
  static constexpr int kUncached = 3;  // the index of the uncached-tokens coefficient

  // One completed successful request: the queue it joined (load before its own increment), the
  // prefill queued there before it and the prefill it had to do there, in thousands of tokens,
  // and its time to first token.
  void record(double queue_depth, double queued_prefill_ktokens, double uncached_ktokens,
              double ttft_ms) EXCLUDES(update_mu_);
  // The estimated time to first token in ms (never negative), or nullopt below kMinSamples.
  std::optional<double> predict(double queue_depth, double queued_prefill_ktokens,
                                double uncached_ktokens) const;
  uint64_t samples() const { return samples_.load(std::memory_order_relaxed); }

  // The coefficients (c, b, d, a) as learned, before the non-negativity of predict().
  std::array<double, kFeatures> coefficients() const;
  // The estimate of coefficients w, the way predict() reads them (b, d, a at least 0).
  static double estimate(const std::array<double, kFeatures>& w, double queue_depth,
                         double queued_prefill_ktokens, double uncached_ktokens);

 private:
  // Serialises record(): the covariance, and the read-modify-write of the coefficients, which
  // predict() reads without it.
  Mutex update_mu_;
  double p_[kFeatures][kFeatures] GUARDED_BY(update_mu_);  // covariance
  std::atomic<double> w_[kFeatures] = {0, 0, 0, 0};
  std::atomic<uint64_t> samples_{0};
};

}  // namespace rolter
