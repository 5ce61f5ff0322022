#include "balance/strategies/consistent_hash.h"

#include <algorithm>
#include <string>
#include <tuple>

#include "balance/load_guard.h"
#include "balance/strategies/pick_helpers.h"
#include "common/hash.h"

namespace rolter {
namespace {

// Digests are mixed once more before landing on the ring: callers (and tests) may hand in small or
// structured values, and a raw small number would always land on the ring's first arc.
constexpr uint64_t kDigestSalt = 0x6a09e667f3bcc908ULL;  // sqrt(2) fraction bits, any odd constant

struct RingPoint {
  uint64_t point;
  const std::string* identity;
  uint32_t owner;
};

}  // namespace

ConsistentHashBalancer::ConsistentHashBalancer(std::span<const CandidateSpec> candidates)
    : count_(candidates.size()) {
  std::vector<RingPoint> ring;
  ring.reserve(count_ * kVirtualNodes);
  for (size_t i = 0; i < count_; ++i) {
    const uint64_t base = hash64(candidates[i].identity);
    for (uint64_t node = 0; node < kVirtualNodes; ++node) {
      ring.push_back({hash_combine(base, node), &candidates[i].identity, static_cast<uint32_t>(i)});
    }
  }
  // Colliding points are ordered by identity (then index, for duplicate identities), so the order
  // never depends on where a candidate sits in the list.
  std::sort(ring.begin(), ring.end(), [](const RingPoint& a, const RingPoint& b) {
    return std::tie(a.point, *a.identity, a.owner) < std::tie(b.point, *b.identity, b.owner);
  });
  points_.reserve(ring.size());
  owners_.reserve(ring.size());
  for (const RingPoint& p : ring) {
    points_.push_back(p.point);
    owners_.push_back(p.owner);
  }
}

std::optional<uint64_t> ConsistentHashBalancer::routing_key(const RouteContext& ctx) {
  if (!ctx.session_key.empty()) return hash64(ctx.session_key);
  if (ctx.prompt_digest) return hash_combine(*ctx.prompt_digest, kDigestSalt);
  if (ctx.body_hash) return hash_combine(*ctx.body_hash, kDigestSalt);
  return std::nullopt;
}

std::optional<size_t> ConsistentHashBalancer::pick(const RouteContext& ctx, const Loads& loads) {
  return pick_eligible(ctx, loads, [](size_t) { return true; });
}

std::optional<size_t> ConsistentHashBalancer::pick_eligible(const RouteContext& ctx,
                                                            const Loads& loads, Eligible eligible) {
  // A mismatched Loads belongs to another candidate list: any index would be meaningless.
  if (count_ == 0 || loads.size() != count_) return std::nullopt;
  const std::optional<uint64_t> key = routing_key(ctx);
  if (!key) return rotate_to_eligible(next_, count_, eligible);
  // Bounded load: an owner above the ceiling passes the key on along the ring, as an ineligible one
  // does.
  const std::optional<uint64_t> ceiling =
      load_ceiling(kSpreadGuard, eligible_loads(count_, loads, eligible));
  if (!ceiling) return std::nullopt;
  const auto guarded =
      walk_ring(*key, [&](size_t i) { return eligible(i) && loads[i] <= *ceiling; });
  // Loads move between reads: should every one have grown past the guard meanwhile, any eligible.
  return guarded ? guarded : walk_ring(*key, eligible);
}

std::optional<size_t> ConsistentHashBalancer::walk_ring(uint64_t key, Eligible eligible) const {
  const size_t size = points_.size();
  // The owner of a key is the first point at or after it, wrapping past the top of the ring.
  size_t position =
      static_cast<size_t>(std::lower_bound(points_.begin(), points_.end(), key) - points_.begin());
  if (position == size) position = 0;
  // Consecutive points often share an owner; asking about it again would only repeat the answer.
  size_t last_rejected = count_;
  for (size_t step = 0; step < size; ++step) {
    const size_t owner = owners_[position];
    if (owner != last_rejected) {
      if (eligible(owner)) return owner;
      last_rejected = owner;
    }
    if (++position == size) position = 0;
  }
  return std::nullopt;
}

}  // namespace rolter
