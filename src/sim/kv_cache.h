// KvCache: one simulated engine's paged KV block cache, and the KV events it produces.
//
// The cache holds `kv_blocks` blocks of `block_size` tokens. A block is identified by a
// prefix-chained hash: hash(block i) = H(hash(block i-1), token ids of block i), where the chain
// of a request that names a LoRA adapter starts from a hash of the adapter's name (so equal text
// under different adapters never shares blocks). Only FULL blocks are cached; a trailing partial
// block is recomputed by every request, as in vLLM.
//
// A request's cache hit is the run of leading blocks already resident. Admitting a request
// references all its full blocks (allocating the missing ones); finishing it drops the
// references. Referenced blocks are never evicted; unreferenced ones stay resident (they are the
// prefix cache) and are evicted least recently used first when a new block needs room.
//
// Each resident block occupies one physical slot, numbered 0..kv_blocks-1 (vLLM's block id: what
// a KV connector names when a peer pulls the blocks). A slot is reused after its block is evicted.
//
// Changes are reported as vLLM-style KV events to an optional KvEventSink, one call per batch
// (an admission's evictions and stores). The cache does no I/O itself.
//
// Thread-safety: none. One owner calls every method (and receives the sink's callbacks on its
// own thread, synchronously).
//
//   KvCache cache({.kv_blocks = 1024, .block_size = 16});
//   auto chain = cache.chain_hashes(tokens, /*adapter=*/"");
//   if (auto ticket = cache.acquire(now_ms, chain)) { ...; cache.release(now_ms, *ticket); }
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace rolter::sim {

// One KV event, in vLLM's vocabulary.
struct KvEvent {
  enum class Kind { kBlockStored, kBlockRemoved, kAllBlocksCleared };
  Kind kind = Kind::kBlockStored;
  std::vector<uint64_t> block_hashes;
  // BlockStored: the hash of the block just before the first stored one; empty for a chain that
  // starts at the first block of a prompt.
  std::optional<uint64_t> parent_block_hash;
  // BlockStored: the token ids of the stored blocks, block_hashes.size() * block_size of them.
  std::vector<uint32_t> token_ids;
  size_t block_size = 0;
  // BlockStored: the LoRA adapter of the request that stored the blocks; empty for the base model.
  std::string lora_name;
};

// Receives KV events. Implementations must not call back into the cache or model.
class KvEventSink {
 public:
  virtual ~KvEventSink() = default;
  // One batch of events that happened at `at_ms` (the model's virtual milliseconds).
  virtual void on_kv_events(double at_ms, std::span<const KvEvent> events) = 0;
};

struct KvCacheParams {
  size_t kv_blocks = 8192;
  size_t block_size = 16;
};

class KvCache {
 public:
  // The blocks a request holds; give it back to release().
  struct Ticket {
    std::vector<uint64_t> hashes;  // every full block of the request, in prompt order
    size_t hit_blocks = 0;         // leading blocks that were already resident at admission
  };

  explicit KvCache(KvCacheParams params, KvEventSink* sink = nullptr);

  const KvCacheParams& params() const { return params_; }

  // The chained hashes of every full block of `tokens` (at most kv_blocks of them: a longer
  // prompt cannot be cached whole, and its tail is simply recomputed).
  std::vector<uint64_t> chain_hashes(std::span<const uint32_t> tokens,
                                     std::string_view adapter) const;

  // Leading blocks of `hashes` that are resident now (no side effects).
  size_t leading_hits(std::span<const uint64_t> hashes) const;

  // References every block of `hashes`, allocating (and publishing BlockStored for) the missing
  // ones, evicting least recently used unreferenced blocks for room (BlockRemoved). Returns
  // nullopt, changing nothing, when there is not enough room without evicting referenced
  // blocks. `tokens` are the prompt's ids (for BlockStored.token_ids).
  std::optional<Ticket> acquire(double now_ms, std::span<const uint64_t> hashes,
                                std::span<const uint32_t> tokens, std::string_view adapter);

  // Drops the references of `ticket`. Its blocks stay resident as prefix cache; the tail blocks
  // of the prompt become the first candidates for eviction, so a shared prefix outlives the
  // suffixes that hang off it.
  void release(const Ticket& ticket);

  // Evicts every unreferenced block and publishes AllBlocksCleared (vLLM's prefix-cache reset).
  void clear(double now_ms);

  size_t resident_blocks() const { return blocks_.size(); }
  size_t referenced_blocks() const { return blocks_.size() - lru_.size(); }
  bool contains(uint64_t hash) const { return blocks_.contains(hash); }
  // The physical slot of each block of `hashes`, in order; nullopt when one is not resident.
  std::optional<std::vector<uint32_t>> block_ids(std::span<const uint64_t> hashes) const;
  // True when `hash` is resident and referenced by a running request.
  bool referenced(uint64_t hash) const;

 private:
  struct Block {
    uint32_t refs = 0;
    uint32_t slot = 0;                      // physical block id
    std::list<uint64_t>::iterator lru_pos;  // valid while refs == 0
  };

  void publish(double now_ms, std::vector<KvEvent>& events);
  uint32_t take_slot();
  void erase_block(uint64_t hash);

  KvCacheParams params_;
  KvEventSink* sink_;
  std::unordered_map<uint64_t, Block> blocks_;
  // Unreferenced resident blocks, least recently used at the front.
  std::list<uint64_t> lru_;
  // Slots given back by evicted blocks, reused first; then never-used slots from next_slot_.
  std::vector<uint32_t> free_slots_;
  uint32_t next_slot_ = 0;
};

}  // namespace rolter::sim
