// ConsistentHashBalancer: SPEC §6.5. A hash ring with 100 virtual nodes per candidate.
//
// Ring points derive from CandidateSpec::identity, never from the index, so removing a candidate
// (or reordering the list on a reload) moves only the keys that candidate owned. The key of a
// request is its session_key, else its prompt_digest, else its body_hash; a request with none of
// them is served round-robin. An ineligible owner passes the request clockwise along the ring to
// the next eligible owner, which is where the key would land if that owner were removed; so does
// one above the bounded load (kSpreadGuard, balance/load_guard.h, SPEC §6.16): consistent hashing
// with bounded loads, so a hot key or an unlucky share of the ring cannot build a queue worse than
// round-robin's.
//
// Thread-safety: the ring is immutable after construction; the round-robin fallback is one
// relaxed atomic counter. Every method may be called concurrently. No allocation per pick.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "balance/candidate.h"
#include "balance/load_balancer.h"
#include "balance/strategy_names.h"

namespace rolter {

class ConsistentHashBalancer final : public LoadBalancer {
 public:
  // SPEC §6.5: enough points that each candidate's share of the ring stays within ~10-20% of 1/n.
  static constexpr size_t kVirtualNodes = 100;

  explicit ConsistentHashBalancer(std::span<const CandidateSpec> candidates);

  std::string_view name() const override { return strategy::kConsistentHash; }
  std::optional<size_t> pick(const RouteContext& ctx, const Loads& loads) override;
  std::optional<size_t> pick_eligible(const RouteContext& ctx, const Loads& loads,
                                      Eligible eligible) override;

  // The ring position a request hashes to: session_key, else prompt_digest, else body_hash;
  // nullopt when the request carries none of them.
  static std::optional<uint64_t> routing_key(const RouteContext& ctx);

 private:
  std::optional<size_t> walk_ring(uint64_t key, Eligible eligible) const;

  const size_t count_;
  // Sorted ring points and, at the same position, the candidate that owns each point. Two arrays
  // so the binary search touches only the points.
  std::vector<uint64_t> points_;
  std::vector<uint32_t> owners_;
  // Requests without a key are served round-robin.
  std::atomic<uint64_t> next_{0};
};

}  // namespace rolter
