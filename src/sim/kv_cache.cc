#include "sim/kv_cache.h"

#include <algorithm>
#include <string>

#include "common/hash.h"

namespace rolter::sim {
namespace {

// Seed of the block hash chain: fixed, so every engine of a fleet (and every run) names equal
// blocks alike, as vLLM does with a fixed PYTHONHASHSEED.
constexpr uint64_t kChainSeed = 0x726f6c7465722d6bULL;

}  // namespace

KvCache::KvCache(KvCacheParams params, KvEventSink* sink) : params_(params), sink_(sink) {
  // A zero-sized cache or block would make every division and loop below meaningless.
  params_.kv_blocks = std::max<size_t>(1, params_.kv_blocks);
  params_.block_size = std::max<size_t>(1, params_.block_size);
}

std::vector<uint64_t> KvCache::chain_hashes(std::span<const uint32_t> tokens,
                                            std::string_view adapter) const {
  const size_t full = std::min(tokens.size() / params_.block_size, params_.kv_blocks);
  std::vector<uint64_t> out;
  out.reserve(full);
  uint64_t parent = adapter.empty() ? kChainSeed : hash64(adapter, kChainSeed);
  for (size_t i = 0; i < full; ++i) {
    const auto block = tokens.subspan(i * params_.block_size, params_.block_size);
    const std::string_view bytes(reinterpret_cast<const char*>(block.data()),
                                 block.size() * sizeof(uint32_t));
    parent = hash_combine(parent, hash64(bytes, kChainSeed));
    out.push_back(parent);
  }
  return out;
}

size_t KvCache::leading_hits(std::span<const uint64_t> hashes) const {
  size_t n = 0;
  while (n < hashes.size() && blocks_.contains(hashes[n])) ++n;
  return n;
}

std::optional<std::vector<uint32_t>> KvCache::block_ids(std::span<const uint64_t> hashes) const {
  std::vector<uint32_t> ids;
  ids.reserve(hashes.size());
  for (uint64_t h : hashes) {
    auto it = blocks_.find(h);
    if (it == blocks_.end()) return std::nullopt;
    ids.push_back(it->second.slot);
  }
  return ids;
}

uint32_t KvCache::take_slot() {
  if (free_slots_.empty()) return next_slot_++;
  const uint32_t slot = free_slots_.back();
  free_slots_.pop_back();
  return slot;
}

void KvCache::erase_block(uint64_t hash) {
  auto it = blocks_.find(hash);
  if (it == blocks_.end()) return;
  free_slots_.push_back(it->second.slot);
  blocks_.erase(it);
}

bool KvCache::referenced(uint64_t hash) const {
  auto it = blocks_.find(hash);
  return it != blocks_.end() && it->second.refs > 0;
}

std::optional<KvCache::Ticket> KvCache::acquire(double now_ms, std::span<const uint64_t> hashes,
                                                std::span<const uint32_t> tokens,
                                                std::string_view adapter) {
  // Room check first, so a request that does not fit changes nothing.
  size_t missing = 0;
  size_t resident_unreferenced = 0;
  for (uint64_t h : hashes) {
    auto it = blocks_.find(h);
    if (it == blocks_.end()) {
      ++missing;
    } else if (it->second.refs == 0) {
      ++resident_unreferenced;
    }
  }
  const size_t free_blocks = params_.kv_blocks - blocks_.size();
  const size_t evictable = lru_.size() - resident_unreferenced;
  if (missing > free_blocks + evictable) return std::nullopt;

  Ticket ticket;
  ticket.hashes.assign(hashes.begin(), hashes.end());
  ticket.hit_blocks = leading_hits(hashes);

  std::vector<KvEvent> events;
  // Reference the resident blocks first so the evictions below cannot pick them.
  for (uint64_t h : hashes) {
    auto it = blocks_.find(h);
    if (it == blocks_.end()) continue;
    if (it->second.refs++ == 0) lru_.erase(it->second.lru_pos);
  }
  size_t to_evict = missing > free_blocks ? missing - free_blocks : 0;
  if (to_evict > 0) {
    KvEvent removed;
    removed.kind = KvEvent::Kind::kBlockRemoved;
    while (to_evict-- > 0) {
      const uint64_t victim = lru_.front();
      lru_.pop_front();
      erase_block(victim);
      removed.block_hashes.push_back(victim);
    }
    events.push_back(std::move(removed));
  }
  // Store the missing blocks; each contiguous run is one BlockStored chained to its parent.
  KvEvent* run = nullptr;
  for (size_t i = 0; i < hashes.size(); ++i) {
    auto [it, inserted] = blocks_.try_emplace(hashes[i]);
    if (!inserted) {
      run = nullptr;
      continue;
    }
    it->second.refs = 1;
    it->second.slot = take_slot();
    if (run == nullptr) {
      KvEvent stored;
      stored.kind = KvEvent::Kind::kBlockStored;
      if (i > 0) stored.parent_block_hash = hashes[i - 1];
      stored.block_size = params_.block_size;
      stored.lora_name.assign(adapter);
      events.push_back(std::move(stored));
      run = &events.back();
    }
    run->block_hashes.push_back(hashes[i]);
    const auto block = tokens.subspan(i * params_.block_size, params_.block_size);
    run->token_ids.insert(run->token_ids.end(), block.begin(), block.end());
  }
  publish(now_ms, events);
  return ticket;
}

void KvCache::release(const Ticket& ticket) {
  // Back to front: the deepest blocks enter the LRU first, so they are evicted before the
  // prefix they hang off (vLLM frees a request's blocks in reverse order for the same reason).
  for (auto h = ticket.hashes.rbegin(); h != ticket.hashes.rend(); ++h) {
    auto it = blocks_.find(*h);
    if (it == blocks_.end() || it->second.refs == 0) continue;
    if (--it->second.refs == 0) it->second.lru_pos = lru_.insert(lru_.end(), *h);
  }
}

void KvCache::clear(double now_ms) {
  for (uint64_t h : lru_) erase_block(h);
  lru_.clear();
  std::vector<KvEvent> events(1);
  events[0].kind = KvEvent::Kind::kAllBlocksCleared;
  publish(now_ms, events);
}

void KvCache::publish(double now_ms, std::vector<KvEvent>& events) {
  if (sink_ != nullptr && !events.empty()) sink_->on_kv_events(now_ms, events);
}

}  // namespace rolter::sim
