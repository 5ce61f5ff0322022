// Flip thresholds: how busy a session's owner must get before policy mode moves the session
// (SPEC §7, least_inflight + session_affinity).
//
// A session's owner is the candidate its key ranks first (session_affinity scores it 1, the next
// 1/2, ...). With every other target idle, the owner keeps the session until least_inflight's
// preference for an idle target outweighs session_affinity's preference for the owner. This finds
// the smallest owner in-flight count at which that happens by running the real plugins and the
// real finisher (PolicyBalancer::totals) on synthetic loads: there is no second formula to drift
// from the code.
//
// Thread-safety: pure; may be called from any thread.
#pragma once

#include <cstddef>
#include <optional>

namespace rolter {

// A least_inflight : session_affinity weight ratio, e.g. 1.5 : 1. Both finite and > 0.
struct PolicyRatio {
  double least_inflight = 1;
  double session_affinity = 1;
};

struct FlipThreshold {
  size_t targets = 0;
  PolicyRatio ratio;
  // The smallest owner in-flight count (1..kMaxInflight) at which an idle target's total beats
  // the owner's; nullopt = the owner keeps the session up to kMaxInflight.
  std::optional<int> flip;
  // The smallest count, at or before `flip`, at which the owner's total ties the best other
  // target's (the finisher's same_total): from there the pick is a coin flip. nullopt = none.
  std::optional<int> tie_at;
};

// The largest in-flight count examined.
inline constexpr int kMaxFlipInflight = 1000;

// REQUIRES: targets >= 2; ratio weights finite and > 0.
FlipThreshold flip_threshold(size_t targets, PolicyRatio ratio);

}  // namespace rolter
