// RendezvousPlugin: policy mode's session_affinity voter (SPEC §7; `session_affinity_weight` in
// [routes.policy]). Unlike the pipeline's session_affinity scorer, it remembers nothing.
//
// Ranks the eligible candidates by rendezvous (highest-random-weight) hashing of the request's
// policy session key with each candidate's identity, and scores the rank-k candidate 2^-k (1, 1/2,
// 1/4, ...). The ranking depends only on the key and the identities (xxh3, fixed seeds), so every
// gateway node, on any machine, ranks a session the same way without sharing state; adding a
// candidate takes over only the sessions for which it ranks first (about 1/N of them) and moves
// no other session. A request without a session key gets no vote (multiplier 0).
//
// Thread-safety: the plugin is immutable after construction; vote() may be called concurrently.
// Per-vote scratch lives in thread_local buffers that only grow, so after a thread's first vote
// at a given candidate count a vote makes no allocation.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "balance/candidate.h"
#include "balance/policy_plugin.h"

namespace rolter {

class RendezvousPlugin final : public PolicyPlugin {
 public:
  explicit RendezvousPlugin(std::span<const CandidateSpec> candidates);

  // Keys up to this length are hashed as they are; a longer one is ranked by its 64-bit digest.
  static constexpr size_t kMaxRankedKeyBytes = 256;

  std::string_view name() const override { return "session_affinity"; }
  // Abstains (returns 0) when ctx.policy_session_key is empty; else multiplier 1.
  double vote(const RouteContext& ctx, const Loads& loads, Eligible eligible,
              std::span<double> out) override;

  // The rendezvous weight of candidate i for a session key: higher ranks first.
  uint64_t rendezvous_weight(std::string_view session_key, size_t i) const;

 private:
  // hash64(identity) per candidate: the seed of that candidate's hash of a session key.
  std::vector<uint64_t> identity_hashes_;
};

}  // namespace rolter
