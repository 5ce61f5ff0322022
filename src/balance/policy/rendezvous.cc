#include "balance/policy/rendezvous.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "common/hash.h"

namespace rolter {
namespace {

struct Ranked {
  uint64_t weight;
  uint64_t identity_hash;  // settles a (vanishingly rare) equal weight the same way on every node
  uint32_t index;
};

// Per-thread scratch for one vote. Only grows.
std::vector<Ranked>& scratch() {
  thread_local std::vector<Ranked> buffer;
  return buffer;
}

}  // namespace

RendezvousPlugin::RendezvousPlugin(std::span<const CandidateSpec> candidates) {
  identity_hashes_.reserve(candidates.size());
  for (const CandidateSpec& c : candidates) identity_hashes_.push_back(hash64(c.identity));
}

uint64_t RendezvousPlugin::rendezvous_weight(std::string_view session_key, size_t i) const {
  // xxh3 of the key seeded by the identity's hash: a full-quality hash of the pair, stable across
  // processes and machines (xxh3's output does not depend on the platform).
  return hash64(session_key, identity_hashes_[i]);
}

double RendezvousPlugin::vote(const RouteContext& ctx, const Loads& loads, Eligible eligible,
                                   std::span<double> out) {
  std::string_view key = ctx.policy_session_key;
  if (key.empty() || out.size() != identity_hashes_.size()) return 0;
  // A long key (a body field may run to megabytes) is ranked by its digest, written little-endian
  // so every machine agrees: the pick then reads it once, not once per candidate.
  std::array<char, 8> digest;
  if (key.size() > kMaxRankedKeyBytes) {
    const uint64_t d = hash64(key);
    for (size_t b = 0; b < digest.size(); ++b) digest[b] = static_cast<char>(d >> (8 * b));
    key = std::string_view(digest.data(), digest.size());
  }
  std::vector<Ranked>& ranked = scratch();
  ranked.clear();  // keeps capacity
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = 0;
    if (!eligible(i)) continue;
    ranked.push_back({rendezvous_weight(key, i), identity_hashes_[i], static_cast<uint32_t>(i)});
  }
  std::sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
    if (a.weight != b.weight) return a.weight > b.weight;
    return a.identity_hash > b.identity_hash;
  });
  for (size_t rank = 0; rank < ranked.size(); ++rank) {
    // 2^-rank; past rank 1074 a double underflows to 0, which is the right limit anyway.
    out[ranked[rank].index] = std::ldexp(1.0, -static_cast<int>(std::min<size_t>(rank, 2000)));
  }
  return 1.0;
}

}  // namespace rolter
