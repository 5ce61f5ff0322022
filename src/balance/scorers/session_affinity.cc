#include "balance/scorers/session_affinity.h"

#include <iterator>
#include <utility>

#include "common/hash.h"

namespace rolter {
namespace {

uint64_t session_hash(std::string_view session_key) { return hash64(session_key); }

// High bits pick the shard, so the map inside a shard still sees well-mixed low bits.
size_t shard_index(uint64_t key) { return (key >> 32) % SessionAffinityScorer::kShards; }

}  // namespace

SessionAffinityScorer::SessionAffinityScorer(const Clock& clock, size_t capacity)
    : clock_(clock), shard_capacity_(capacity == 0 ? 1 : (capacity + kShards - 1) / kShards) {}

size_t SessionAffinityScorer::shard_of(std::string_view session_key) {
  return shard_index(session_hash(session_key));
}

size_t SessionAffinityScorer::size() const {
  size_t total = 0;
  for (const Shard& shard : shards_) {
    MutexLock lock(shard.mu);
    total += shard.lru.size();
  }
  return total;
}

std::optional<size_t> SessionAffinityScorer::lookup(std::string_view session_key) {
  if (session_key.empty()) return std::nullopt;
  return lookup_key(session_hash(session_key));
}

std::optional<size_t> SessionAffinityScorer::lookup_key(uint64_t key) {
  const Clock::TimePoint now = clock_.now();
  Shard& shard = shards_[shard_index(key)];
  MutexLock lock(shard.mu);
  const auto found = shard.by_key.find(key);
  if (found == shard.by_key.end()) return std::nullopt;
  const auto entry = found->second;
  if (now - entry->last_served > kTtl) {
    // Expired: neutral, and its slot is better spent on a live session.
    shard.lru.erase(entry);
    shard.by_key.erase(found);
    return std::nullopt;
  }
  return entry->index;
}

void SessionAffinityScorer::score(const RouteContext& ctx, const Loads& loads, Eligible eligible,
                                  std::span<double> out) {
  for (double& v : out) v = 0;
  const auto owner = lookup(ctx.session_key);
  // An owner that cannot take this attempt leaves every candidate neutral: the other scorers
  // choose, and observe() then moves the session to whoever serves it.
  if (owner && *owner < out.size() && eligible(*owner)) out[*owner] = 1.0;
}

void SessionAffinityScorer::observe(size_t index, const RouteContext& ctx) {
  if (ctx.session_key.empty()) return;
  const uint64_t key = session_hash(ctx.session_key);
  const Clock::TimePoint now = clock_.now();
  Shard& shard = shards_[shard_index(key)];
  MutexLock lock(shard.mu);

  if (const auto found = shard.by_key.find(key); found != shard.by_key.end()) {
    const auto entry = found->second;
    entry->index = index;
    entry->last_served = now;
    shard.lru.splice(shard.lru.begin(), shard.lru, entry);
    return;
  }
  if (shard.lru.size() < shard_capacity_) {
    shard.lru.push_front({key, index, now});
    shard.by_key.emplace(key, shard.lru.begin());
    return;
  }
  // Full: the least recently served session gives up its list node and map node to this one.
  const auto oldest = std::prev(shard.lru.end());
  auto node = shard.by_key.extract(oldest->key);
  *oldest = {key, index, now};
  shard.lru.splice(shard.lru.begin(), shard.lru, oldest);
  node.key() = key;
  shard.by_key.insert(std::move(node));
}

}  // namespace rolter
