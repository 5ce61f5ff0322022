#include "kv/kv_index_tables.h"

#include <algorithm>

namespace rolter {
namespace {

constexpr size_t kMinSlots = 16;

// Backward-shift deletion: the entry at j may fill the hole when the hole lies on its probe path,
// i.e. the entry is at least as far from its home as the hole is from j.
bool may_fill(const KvProbe& probe, size_t hole, size_t j, size_t home) {
  return probe.distance(home, j) >= probe.distance(hole, j);
}

}  // namespace

KvProbe KvProbe::grown(const KvProbe& now, size_t size, size_t limit) {
  const size_t needed = (size + 1) * 4 / 3 + 1;  // the fewest slots that keep 3/4
  const size_t capped = limit == 0 ? SIZE_MAX : limit * 4 / 3 + 1;  // `limit` entries at 3/4
  KvProbe next;
  next.slots_ = std::max({needed, kMinSlots, std::min(now.slots_ * 2, capped)});
  return next;
}

size_t KvKeySet::find(uint64_t key) const {
  if (keys_.empty()) return kNone;
  for (size_t i = probe_.home(key);; i = probe_.next(i)) {
    if (keys_[i] == key) return i;
    if (keys_[i] == 0) return kNone;
  }
}

void KvKeySet::add(uint64_t key) {
  if (key == 0) {
    ++zeros_;
    return;
  }
  if (probe_.full(size_)) grow();
  size_t i = probe_.home(key);
  while (keys_[i] != 0) i = probe_.next(i);
  keys_[i] = key;
  ++size_;
}

void KvKeySet::remove(uint64_t key) {
  if (key == 0) {
    if (zeros_ > 0) --zeros_;
    return;
  }
  size_t hole = find(key);
  if (hole == kNone) return;
  for (size_t j = probe_.next(hole); keys_[j] != 0; j = probe_.next(j)) {
    if (may_fill(probe_, hole, j, probe_.home(keys_[j]))) {
      keys_[hole] = keys_[j];
      hole = j;
    }
  }
  keys_[hole] = 0;
  --size_;
}

void KvKeySet::grow() {
  probe_ = KvProbe::grown(probe_, size_, limit_);
  std::vector<uint64_t> old(probe_.slots(), 0);
  old.swap(keys_);
  for (uint64_t key : old) {
    if (key == 0) continue;
    size_t i = probe_.home(key);
    while (keys_[i] != 0) i = probe_.next(i);
    keys_[i] = key;
  }
}

void KvKeySet::clear() {
  std::fill(keys_.begin(), keys_.end(), 0);
  size_ = 0;
  zeros_ = 0;
}

uint32_t KvEngineSlots::find(uint64_t engine_hash, const std::vector<KvNode>& nodes) const {
  if (slots_.empty()) return kKvNil;
  for (size_t i = probe_.home(engine_hash);; i = probe_.next(i)) {
    if (slots_[i] == kKvNil) return kKvNil;
    if (nodes[slots_[i]].engine_hash == engine_hash) return slots_[i];
  }
}

void KvEngineSlots::insert(uint32_t node, const std::vector<KvNode>& nodes) {
  if (probe_.full(size_)) grow(nodes);
  size_t i = probe_.home(nodes[node].engine_hash);
  while (slots_[i] != kKvNil) i = probe_.next(i);
  slots_[i] = node;
  ++size_;
}

void KvEngineSlots::erase(uint32_t node, const std::vector<KvNode>& nodes) {
  if (slots_.empty()) return;
  size_t hole = probe_.home(nodes[node].engine_hash);
  while (slots_[hole] != node) {
    if (slots_[hole] == kKvNil) return;
    hole = probe_.next(hole);
  }
  for (size_t j = probe_.next(hole); slots_[j] != kKvNil; j = probe_.next(j)) {
    if (may_fill(probe_, hole, j, probe_.home(nodes[slots_[j]].engine_hash))) {
      slots_[hole] = slots_[j];
      hole = j;
    }
  }
  slots_[hole] = kKvNil;
  --size_;
}

void KvEngineSlots::grow(const std::vector<KvNode>& nodes) {
  probe_ = KvProbe::grown(probe_, size_, limit_);
  std::vector<uint32_t> old(probe_.slots(), kKvNil);
  old.swap(slots_);
  for (uint32_t node : old) {
    if (node == kKvNil) continue;
    size_t i = probe_.home(nodes[node].engine_hash);
    while (slots_[i] != kKvNil) i = probe_.next(i);
    slots_[i] = node;
  }
}

void KvEngineSlots::clear() {
  std::fill(slots_.begin(), slots_.end(), kKvNil);
  size_ = 0;
}

}  // namespace rolter
