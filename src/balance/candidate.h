// CandidateSpec: what a balancer knows about each candidate when it is built (SPEC §4).
//
// Candidates are every instance of every target of a route, in a stable order; a balancer returns
// indexes into that order. Immutable after the snapshot is built.
#pragma once

#include <string>

namespace rolter {

struct CandidateSpec {
  // Stable identity of the candidate across reloads: "<provider>/<model>@<base_url>". Ring
  // positions and affinity keys derive from it, never from the index.
  std::string identity;
  // Per-instance weight: the target's weight split evenly over its instances, so a target's share
  // does not change with its instance count. >= 0 and finite.
  double weight = 1.0;
};

}  // namespace rolter
