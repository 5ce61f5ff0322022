// Helpers for tests and benchmarks that need candidate lists: stable identities and the SPEC §4
// split of a target's weight over its instances. Header-only; tests and benchmarks only.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "balance/candidate.h"

namespace rolter {

// The identity of candidate i in the fixtures: unique and stable, shaped like the real thing.
inline std::string fixture_identity(size_t i) {
  return "provider" + std::to_string(i) + "/model@http://10.0.0." + std::to_string(i) + ":8000";
}

// One candidate per weight, identities from fixture_identity().
inline std::vector<CandidateSpec> make_candidates(const std::vector<double>& weights) {
  std::vector<CandidateSpec> out;
  for (size_t i = 0; i < weights.size(); ++i) out.push_back({.identity = fixture_identity(i), .weight = weights[i]});
  return out;
}

// n candidates of weight 1.
inline std::vector<CandidateSpec> make_candidates(size_t n) {
  return make_candidates(std::vector<double>(n, 1.0));
}

// Candidates for targets given as (target weight, instance count): each instance gets the target's
// weight divided by its instance count, in target order (SPEC §4).
inline std::vector<CandidateSpec> make_target_candidates(
    const std::vector<std::pair<double, size_t>>& targets) {
  std::vector<CandidateSpec> out;
  for (size_t t = 0; t < targets.size(); ++t) {
    for (size_t k = 0; k < targets[t].second; ++k) {
      out.push_back({.identity = "target" + std::to_string(t) + "/model@http://10.0." +
                                 std::to_string(t) + "." + std::to_string(k) + ":8000",
                     .target = t,
                     .weight = targets[t].first / static_cast<double>(targets[t].second)});
    }
  }
  return out;
}

}  // namespace rolter
