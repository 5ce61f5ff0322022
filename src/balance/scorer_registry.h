// The scorer registry: builds a score-stack scorer (balance/scorer.h) from its name, so a stack
// can be written as a list of (name, weight) and a new scorer is one small class plus one line in
// scorer_registry.cc's table.
//
// Called when a snapshot builds its balancers, never on the pick path.
// Thread-safety: pure; may be called from any thread.
//
//   auto scorer = make_scorer("least_load", ScorerDeps{.candidates = candidates});
//   if (!scorer) ... unknown name ...
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "balance/candidate.h"
#include "balance/scorer.h"
#include "common/clock.h"
#include "common/random.h"

namespace rolter {

class PrefixSharing;

// What scorers may be built from. The candidate list is read during make_scorer() only (scorers
// copy what they need); random and clock must outlive the scorer. Null means the process default.
struct ScorerDeps {
  std::span<const CandidateSpec> candidates;
  Random* random = &default_random();
  const Clock* clock = &default_clock();
  // Where a prefix_affinity scorer shares its tree with the other gateway nodes, and under which
  // name (balance/prefix/prefix_sharing.h); null = not shared.
  PrefixSharing* sharing = nullptr;
  std::string_view shared_tree;
};

// The scorer registered under `name`, built for deps.candidates; nullptr for an unknown name.
std::unique_ptr<Scorer> make_scorer(std::string_view name, const ScorerDeps& deps);

// The registered names, in registration order (for error messages and documentation).
std::span<const std::string_view> known_scorers();

bool is_known_scorer(std::string_view name);

}  // namespace rolter
