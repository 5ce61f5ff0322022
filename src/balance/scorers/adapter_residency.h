// AdapterResidencyScorer: SPEC §6.12 "adapter resident". Per candidate, an LRU of the adapters it
// recently served, as many as the provider's max_loras (0: it never holds one); 1.0 for the
// eligible candidates holding the request's adapter, 0 for the rest. All 0 (neutral) when the
// request names no adapter or no eligible candidate holds it: the stack's other scorers decide.
//
// The LRU stands in for what the engine keeps loaded: an engine serving max_loras adapters
// evicts the least recently used one to load another, so the adapters a candidate served most
// recently are the ones it most likely still has. Adapters are keyed by a 64-bit hash of their
// name, so a slot is 8 bytes and a comparison one instruction.
//
// Thread-safety: score() and observe() run concurrently on every worker. Each candidate's LRU has
// its own mutex: it is small (max_loras entries, 8 by default) and a lock is held only for one
// scan of it. score() locks only when the request names an adapter. No allocation per score();
// observe() allocates only while a candidate's LRU is still filling.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "balance/candidate.h"
#include "balance/scorer.h"
#include "common/mutex.h"

namespace rolter {

class AdapterResidencyScorer final : public Scorer {
 public:
  explicit AdapterResidencyScorer(std::span<const CandidateSpec> candidates);

  std::string_view name() const override { return "adapter_residency"; }
  void score(const RouteContext& ctx, const Loads& loads, Eligible eligible,
             std::span<double> out) override;
  // Records that candidate `index` served ctx.adapter: it becomes that candidate's most recent.
  void observe(size_t index, const RouteContext& ctx) override;

  // Whether candidate `index` holds `adapter` now (for tests).
  bool holds(size_t index, std::string_view adapter) const;

 private:
  struct Residents {
    mutable Mutex mu;
    size_t capacity = 0;  // set once, before the scorer is shared
    std::vector<uint64_t> adapters GUARDED_BY(mu);  // most recently served first, at most `capacity`
  };

  bool holds_key(size_t index, uint64_t key) const;

  const size_t count_;
  // An array, not a vector: a mutex cannot move.
  std::unique_ptr<Residents[]> residents_;
};

}  // namespace rolter
