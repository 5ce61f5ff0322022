#include "kv/kv_index_tables.h"

#include <algorithm>
#include <bit>

namespace rolter {
namespace {

constexpr size_t kMinSlots = 16;

// Fibonacci hashing: the top bits of h times 2^64/phi.
inline size_t home(uint64_t h, int shift) {
  return static_cast<size_t>((h * 0x9E3779B97F4A7C15ULL) >> shift);
}

// Whether one more entry would fill `slots` past 3/4 (at 3/4 a linear probe that misses reads
// about 8 slots; a hit, about 2.5).
inline bool too_full(size_t size, size_t slots) { return (size + 1) * 4 > slots * 3; }

// Backward-shift deletion: the entry at j (home k) may fill the hole at i when i lies on its probe
// path, i.e. no nearer its home than i is to j.
inline bool may_fill(size_t hole, size_t j, size_t k, size_t mask) {
  return ((j - k) & mask) >= ((j - hole) & mask);
}

}  // namespace

size_t KvKeyCounts::find(uint64_t key) const {
  if (keys_.empty()) return kNone;
  const size_t mask = keys_.size() - 1;
  for (size_t i = home(key, shift_);; i = (i + 1) & mask) {
    if (keys_[i] == key) return i;
    if (keys_[i] == 0) return kNone;
  }
}

void KvKeyCounts::add(uint64_t key) {
  if (key == 0) {
    ++zero_count_;
    return;
  }
  if (too_full(size_, keys_.size())) grow();
  const size_t mask = keys_.size() - 1;
  size_t i = home(key, shift_);
  while (keys_[i] != 0 && keys_[i] != key) i = (i + 1) & mask;
  if (keys_[i] == 0) {
    keys_[i] = key;
    ++size_;
  }
  ++counts_[i];
}

void KvKeyCounts::remove(uint64_t key) {
  if (key == 0) {
    if (zero_count_ > 0) --zero_count_;
    return;
  }
  size_t hole = find(key);
  if (hole == kNone) return;
  if (--counts_[hole] > 0) return;
  const size_t mask = keys_.size() - 1;
  for (size_t j = (hole + 1) & mask; keys_[j] != 0; j = (j + 1) & mask) {
    if (may_fill(hole, j, home(keys_[j], shift_), mask)) {
      keys_[hole] = keys_[j];
      counts_[hole] = counts_[j];
      hole = j;
    }
  }
  keys_[hole] = 0;
  counts_[hole] = 0;
  --size_;
}

void KvKeyCounts::grow() {
  const size_t slots = keys_.empty() ? kMinSlots : keys_.size() * 2;
  std::vector<uint64_t> old_keys(slots, 0);
  std::vector<uint32_t> old_counts(slots, 0);
  old_keys.swap(keys_);
  old_counts.swap(counts_);
  shift_ = 64 - std::countr_zero(slots);
  const size_t mask = slots - 1;
  for (size_t j = 0; j < old_keys.size(); ++j) {
    if (old_keys[j] == 0) continue;
    size_t i = home(old_keys[j], shift_);
    while (keys_[i] != 0) i = (i + 1) & mask;
    keys_[i] = old_keys[j];
    counts_[i] = old_counts[j];
  }
}

void KvKeyCounts::clear() {
  std::fill(keys_.begin(), keys_.end(), 0);
  std::fill(counts_.begin(), counts_.end(), 0);
  size_ = 0;
  zero_count_ = 0;
}

size_t KvKeyCounts::memory_bytes() const {
  return keys_.capacity() * sizeof(uint64_t) + counts_.capacity() * sizeof(uint32_t);
}

uint32_t KvEngineSlots::find(uint64_t engine_hash, const std::vector<KvNode>& nodes) const {
  if (slots_.empty()) return kKvNil;
  const size_t mask = slots_.size() - 1;
  for (size_t i = home(engine_hash, shift_);; i = (i + 1) & mask) {
    if (slots_[i] == kKvNil) return kKvNil;
    if (nodes[slots_[i]].engine_hash == engine_hash) return slots_[i];
  }
}

void KvEngineSlots::insert(uint32_t node, const std::vector<KvNode>& nodes) {
  if (too_full(size_, slots_.size())) grow(nodes);
  const size_t mask = slots_.size() - 1;
  size_t i = home(nodes[node].engine_hash, shift_);
  while (slots_[i] != kKvNil) i = (i + 1) & mask;
  slots_[i] = node;
  ++size_;
}

void KvEngineSlots::erase(uint32_t node, const std::vector<KvNode>& nodes) {
  if (slots_.empty()) return;
  const size_t mask = slots_.size() - 1;
  size_t hole = home(nodes[node].engine_hash, shift_);
  while (slots_[hole] != node) {
    if (slots_[hole] == kKvNil) return;
    hole = (hole + 1) & mask;
  }
  for (size_t j = (hole + 1) & mask; slots_[j] != kKvNil; j = (j + 1) & mask) {
    if (may_fill(hole, j, home(nodes[slots_[j]].engine_hash, shift_), mask)) {
      slots_[hole] = slots_[j];
      hole = j;
    }
  }
  slots_[hole] = kKvNil;
  --size_;
}

void KvEngineSlots::grow(const std::vector<KvNode>& nodes) {
  const size_t slots = slots_.empty() ? kMinSlots : slots_.size() * 2;
  std::vector<uint32_t> old(slots, kKvNil);
  old.swap(slots_);
  shift_ = 64 - std::countr_zero(slots);
  const size_t mask = slots - 1;
  for (uint32_t node : old) {
    if (node == kKvNil) continue;
    size_t i = home(nodes[node].engine_hash, shift_);
    while (slots_[i] != kKvNil) i = (i + 1) & mask;
    slots_[i] = node;
  }
}

void KvEngineSlots::clear() {
  std::fill(slots_.begin(), slots_.end(), kKvNil);
  size_ = 0;
}

}  // namespace rolter
