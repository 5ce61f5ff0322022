// TtftModel: one instance's time-to-first-token model for `kv_cost` (SPEC §6.14).
//
//   ttft_ms ≈ c + b · queue_depth + a · uncached_ktokens
//
// learned online by recursive least squares with a forgetting factor of kForget (an effective
// memory of about 2,000 requests, so the model follows an engine that changes), one update per
// completed successful request. Least squares rather than the normalised LMS of
// predicted_latency: prompts range over three orders of magnitude, and LMS, whose steps scale
// with the largest feature, leaves the intercept and queue cost unlearned for thousands of
// samples, and leaves identical engines with models far apart. RLS converges on linear data in a
// few dozen samples whatever the feature scales.
//
// Costs are physical: a and b below 0 (noise, or a queue that never formed) are read as 0 when
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
#include <mutex>
#include <optional>

namespace rolter {

class TtftModel {
 public:
  static constexpr double kForget = 0.9995;
  static constexpr double kInitialCovariance = 1e6;
  static constexpr double kMaxTrace = 1e8;
  static constexpr double kClampMs = 600'000;
  static constexpr uint64_t kMinSamples = 8;

  TtftModel();

  // One completed successful request: the queue it joined (load before its own increment), the
  // thousands of prompt tokens it had to prefill there, and its time to first token.
  void record(double queue_depth, double uncached_ktokens, double ttft_ms);
  // The estimated time to first token in ms (never negative), or nullopt below kMinSamples.
  std::optional<double> predict(double queue_depth, double uncached_ktokens) const;
  uint64_t samples() const { return samples_.load(std::memory_order_relaxed); }

  // The coefficients (c, b, a) as learned, before the non-negativity of predict().
  std::array<double, 3> coefficients() const;

 private:
  std::mutex update_mu_;
  double p_[3][3];  // covariance; guarded by update_mu_
  std::atomic<double> w_[3] = {0, 0, 0};
  std::atomic<uint64_t> samples_{0};
};

}  // namespace rolter
