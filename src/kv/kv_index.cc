// Storage: a slab of KvNodes (one per held engine block, 24 bytes, reused through a free list)
// threaded on an intrusive LRU list by 32-bit indices, and two open-addressing tables
// (kv/kv_index_tables.h): 24 bytes + 4/3 x (8 + 4) bytes = 40 bytes per block when full, more
// while the slab and tables are still doubling; kv_bench.cc measures it.
//
// One engine block is one node. When two engine hashes carry the same rolter key (the engine
// hashed something rolter does not see, such as a cache salt), each is its own node and the key
// is in the key set twice: removing one engine hash keeps the key held through the other.
#include "kv/kv_index.h"

#include <algorithm>

#include "common/mutex.h"
#include "kv/block_keys.h"
#include "kv/kv_index_tables.h"

namespace rolter {
namespace {

// Node indices are 32-bit, and kKvNil is taken.
constexpr size_t kMaxBlocksBound = kKvNil - 1;

size_t bound(size_t max_blocks) { return std::clamp<size_t>(max_blocks, 1, kMaxBlocksBound); }

}  // namespace

struct KvIndex::Impl {
  explicit Impl(size_t max) { set_max_blocks(max); }

  void set_max_blocks(size_t max) REQUIRES(mutex) {
    max_blocks = bound(max);
    engines.set_limit(max_blocks);
    keys.set_limit(max_blocks);
    evict_to(max_blocks, nullptr);
  }

  void apply_stored(const KvBlockStored& event, uint32_t block_size, KvApplyStats& stats)
      REQUIRES(mutex);
  void apply_removed(const KvBlockRemoved& event, KvApplyStats& stats) REQUIRES(mutex);
  void store(EngineBlockHash engine_hash, uint64_t key, KvApplyStats& stats) REQUIRES(mutex);
  void drop(uint32_t node) REQUIRES(mutex);
  uint32_t allocate() REQUIRES(mutex);
  void link_front(uint32_t node) REQUIRES(mutex);
  void unlink(uint32_t node) REQUIRES(mutex);
  void evict_to(size_t limit, KvApplyStats* stats) REQUIRES(mutex);
  void clear() REQUIRES(mutex);

  mutable SharedMutex mutex;
  size_t max_blocks GUARDED_BY(mutex) = 0;
  // The slab; a free node is chained from free_head through `next`.
  std::vector<KvNode> nodes GUARDED_BY(mutex);
  uint32_t free_head GUARDED_BY(mutex) = kKvNil;
  uint32_t lru_head GUARDED_BY(mutex) = kKvNil;  // most recently stored
  uint32_t lru_tail GUARDED_BY(mutex) = kKvNil;  // least recently stored: evicted first
  size_t held GUARDED_BY(mutex) = 0;
  KvEngineSlots engines GUARDED_BY(mutex);
  KvKeySet keys GUARDED_BY(mutex);
};

void KvIndex::Impl::apply_stored(const KvBlockStored& event, uint32_t block_size,
                                 KvApplyStats& stats) {
  const size_t size = event.block_size != 0 ? event.block_size : block_size;
  const size_t blocks = event.block_hashes.size();
  uint64_t key = 0;
  if (event.parent_block_hash) {
    const uint32_t parent = engines.find(*event.parent_block_hash, nodes);
    if (parent == kKvNil) {  // evicted here, or stored before rolter listened: no chain to extend
      stats.unchained += blocks;
      return;
    }
    key = nodes[parent].key;
  } else {
    key = kv_chain_seed(event.lora_name);
  }
  const std::span<const uint32_t> tokens(event.token_ids);
  const size_t covered = size == 0 ? 0 : std::min(blocks, tokens.size() / size);
  for (size_t i = 0; i < covered; ++i) {
    key = kv_block_key(key, tokens.subspan(i * size, size));
    store(event.block_hashes[i], key, stats);
  }
  stats.unchained += blocks - covered;
}

void KvIndex::Impl::apply_removed(const KvBlockRemoved& event, KvApplyStats& stats) {
  for (EngineBlockHash engine_hash : event.block_hashes) {
    const uint32_t node = engines.find(engine_hash, nodes);
    if (node == kKvNil) continue;
    drop(node);
    ++stats.removed;
  }
}

void KvIndex::Impl::store(EngineBlockHash engine_hash, uint64_t key, KvApplyStats& stats) {
  ++stats.stored;
  uint32_t node = engines.find(engine_hash, nodes);
  if (node != kKvNil) {  // held already: refresh, and re-key if the engine reused the hash
    if (nodes[node].key != key) {
      keys.remove(nodes[node].key);
      keys.add(key);
      nodes[node].key = key;
    }
    unlink(node);
    link_front(node);
    return;
  }
  evict_to(max_blocks - 1, &stats);
  node = allocate();
  nodes[node].engine_hash = engine_hash;
  nodes[node].key = key;
  link_front(node);
  engines.insert(node, nodes);
  keys.add(key);
  ++held;
}

void KvIndex::Impl::drop(uint32_t node) {
  keys.remove(nodes[node].key);
  engines.erase(node, nodes);
  unlink(node);
  nodes[node].next = free_head;
  free_head = node;
  --held;
}

uint32_t KvIndex::Impl::allocate() {
  if (free_head != kKvNil) {
    const uint32_t node = free_head;
    free_head = nodes[node].next;
    return node;
  }
  // Grow by doubling, but never past the bound: a full index wastes no slab.
  if (nodes.size() == nodes.capacity()) {
    nodes.reserve(std::min(std::max<size_t>(16, nodes.capacity() * 2), max_blocks));
  }
  nodes.emplace_back();
  return static_cast<uint32_t>(nodes.size() - 1);
}

void KvIndex::Impl::link_front(uint32_t node) {
  nodes[node].prev = kKvNil;
  nodes[node].next = lru_head;
  if (lru_head != kKvNil) nodes[lru_head].prev = node;
  lru_head = node;
  if (lru_tail == kKvNil) lru_tail = node;
}

void KvIndex::Impl::unlink(uint32_t node) {
  const uint32_t prev = nodes[node].prev;
  const uint32_t next = nodes[node].next;
  (prev != kKvNil ? nodes[prev].next : lru_head) = next;
  (next != kKvNil ? nodes[next].prev : lru_tail) = prev;
}

void KvIndex::Impl::evict_to(size_t limit, KvApplyStats* stats) {
  while (held > limit) {
    drop(lru_tail);
    if (stats != nullptr) ++stats->evicted;
  }
}

void KvIndex::Impl::clear() {
  nodes.clear();  // keeps the slab's capacity: an engine that cleared its cache refills it
  free_head = lru_head = lru_tail = kKvNil;
  held = 0;
  engines.clear();
  keys.clear();
}

KvIndex::KvIndex(size_t max_blocks) : impl_(std::make_unique<Impl>(max_blocks)) {}

KvIndex::~KvIndex() = default;

KvApplyStats KvIndex::apply(const KvBatch& batch, uint32_t block_size) {
  KvApplyStats stats;
  WriterMutexLock lock(impl_->mutex);
  for (const KvEventRecord& event : batch.events) {
    switch (event.kind) {
      case KvEventRecord::Kind::kBlockStored:
        impl_->apply_stored(event.stored, block_size, stats);
        break;
      case KvEventRecord::Kind::kBlockRemoved:
        impl_->apply_removed(event.removed, stats);
        break;
      case KvEventRecord::Kind::kAllBlocksCleared:
        impl_->clear();
        stats.cleared = true;
        break;
    }
  }
  return stats;
}

void KvIndex::clear() {
  WriterMutexLock lock(impl_->mutex);
  impl_->clear();
}

void KvIndex::set_max_blocks(size_t max_blocks) {
  WriterMutexLock lock(impl_->mutex);
  impl_->set_max_blocks(max_blocks);
}

size_t KvIndex::leading_blocks(std::span<const uint64_t> keys) const {
  ReaderMutexLock lock(impl_->mutex);
  size_t held = 0;
  while (held < keys.size() && impl_->keys.contains(keys[held])) ++held;
  return held;
}

bool KvIndex::contains(uint64_t key) const {
  ReaderMutexLock lock(impl_->mutex);
  return impl_->keys.contains(key);
}

size_t KvIndex::size() const {
  ReaderMutexLock lock(impl_->mutex);
  return impl_->held;
}

size_t KvIndex::max_blocks() const {
  ReaderMutexLock lock(impl_->mutex);
  return impl_->max_blocks;
}

size_t KvIndex::memory_bytes() const {
  ReaderMutexLock lock(impl_->mutex);
  return sizeof(Impl) + impl_->nodes.capacity() * sizeof(KvNode) + impl_->engines.memory_bytes() +
         impl_->keys.memory_bytes();
}

}  // namespace rolter
