// AdaptivePolicy: the deployment-wide policy of the `adaptive` strategy (SPEC §6.10), sanitised
// from [adaptive_routing].
//
// The config reader already refuses negative weights and a ratio outside [0, 1]; the sanitiser
// still applies every rule, because the same policy also arrives through the control plane's API,
// and a balancer must never see a value it cannot use:
//   - a negative or non-finite weight becomes 0;
//   - exploration_ratio is clamped to [0, 0.5] (NaN becomes 0): above a half, "exploration" would
//     outweigh the blend it is meant to check.
// An all-zero blend is a valid policy that never engages (every pick is the fallback's).
//
// Thread-safety: a value type; pure functions.
#pragma once

#include <cstdint>

namespace rolter {

struct AdaptivePolicy {
  bool enabled = false;
  double latency_weight = 1.0;
  double cost_weight = 0.5;
  double load_weight = 0.25;
  double exploration_ratio = 0.05;
  uint32_t min_samples = 50;

  // Whether some weight is > 0: a blend of nothing ranks nothing, so it never engages.
  bool has_weight() const { return latency_weight > 0 || cost_weight > 0 || load_weight > 0; }
  // Whether the blend may ever engage: enabled, and some weight > 0. Only then are warm-up probes
  // worth sending.
  bool can_engage() const { return enabled && has_weight(); }

  bool operator==(const AdaptivePolicy&) const = default;
};

// SPEC §6.10: the largest share of picks that may go uniformly at random.
inline constexpr double kMaxExplorationRatio = 0.5;

// Applies the sanitising rules above to raw values (the snapshot builder passes the config's).
AdaptivePolicy sanitize_adaptive_policy(const AdaptivePolicy& raw);

}  // namespace rolter
