// KvIndex: which KV blocks one engine instance holds, from its KV events (SPEC §6.8).
//
// Blocks are held by rolter's own chained key (kv/block_keys.h). A BlockStored event's keys are
// chained from its parent's key (found through the engine-hash -> key map) or from the chain seed
// when it has no parent; a stored block whose parent is unknown (evicted here, or stored before
// rolter listened) cannot be keyed and is skipped, and so are the blocks after it in that event.
// BlockRemoved resolves the engine's hashes to keys and drops them. AllBlocksCleared empties the
// index. At most max_blocks blocks are held: storing one more evicts the least recently stored
// (re-storing a held block makes it the most recent).
//
// A block is one engine hash. Two engine hashes with the same rolter key (the engine hashed
// something rolter does not see, such as a cache salt) are two blocks; the key stays held until
// both are removed or evicted. The medium (GPU, CPU) is not tracked: a BlockRemoved from any medium
// drops the block.
//
// Memory: 40 bytes per block once the index is full (a 24-byte node, and 8 + 4 bytes per table
// slot at most 3/4 full), some 40 MB for the default 1,000,000 blocks; more per block while it
// fills, as the storage doubles. memory_bytes() reports the real figure; kv_bench.cc measures it.
//
// leading_blocks(keys) is the scoring primitive: how many of the request's keys, from the first,
// are held. It stops at the first miss.
//
// Concurrency: one writer (the instance's KV-event subscriber thread) and many readers (picks on
// worker threads). A SharedMutex (common/mutex.h) guards the maps: apply() and clear() hold it exclusively
// for one batch; leading_blocks() holds it shared, so picks never block each other and wait at
// most for one batch to be applied. Readers do not touch the LRU order.
//
//   KvIndex index(/*max_blocks=*/1'000'000);
//   index.apply(batch);                      // subscriber thread
//   size_t held = index.leading_blocks(keys);  // any worker
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "kv/kv_event.h"

namespace rolter {

// What apply() did, for the counters.
struct KvApplyStats {
  size_t stored = 0;   // blocks newly held or refreshed
  size_t removed = 0;  // blocks dropped by BlockRemoved
  // Stored blocks skipped: unknown parent, or token ids that do not cover them.
  size_t unchained = 0;
  size_t evicted = 0;    // blocks dropped to stay within max_blocks
  bool cleared = false;  // an AllBlocksCleared was applied
};

class KvIndex {
 public:
  explicit KvIndex(size_t max_blocks);
  ~KvIndex();
  KvIndex(const KvIndex&) = delete;
  KvIndex& operator=(const KvIndex&) = delete;

  // Applies one batch's events in order. `block_size` is the instance's configured tokens per
  // block: a BlockStored whose own block_size is set and differs is keyed by its own.
  KvApplyStats apply(const KvBatch& batch, uint32_t block_size);
  // Forgets every block (AllBlocksCleared, or a gap that cannot be repaired).
  void clear();
  // Changes the bound; evicts at once when the index holds more. 0 is read as 1.
  void set_max_blocks(size_t max_blocks);

  // Number of keys[0..] held, counted from the first, stopping at the first miss. Does not
  // allocate.
  size_t leading_blocks(std::span<const uint64_t> keys) const;
  // Whether one key is held.
  bool contains(uint64_t key) const;

  // Blocks held (engine hashes), at most max_blocks().
  size_t size() const;
  size_t max_blocks() const;
  // Bytes the index has allocated: the node slab and both tables at their capacity, and the index
  // itself (not the allocator's own overhead, a few bytes per array).
  size_t memory_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rolter
