// The two hash tables behind KvIndex (kv/kv_index.h); private to kv/.
//
// Both are linear-probing open-addressing tables over a power-of-two array, at most 3/4 full, with
// backward-shift deletion (no tombstones, so a long-lived index never degrades). They are sized for
// bytes per block, which is what bounds an index of a million blocks:
//   KvKeyCounts    rolter key -> how many held engine blocks have it: 12 bytes a slot (the key and
//                  its count in two arrays, so a lookup reads only the 8-byte keys).
//   KvEngineSlots  engine hash -> node: 4 bytes a slot (the node's index; the hash is read from
//                  the node, which the caller already needs).
// Keys and engine hashes are spread by Fibonacci hashing: engine hashes may be small integers.
//
// Thread-safety: none; KvIndex's lock guards them. Const methods only read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rolter {

inline constexpr uint32_t kKvNil = UINT32_MAX;

// One held block: an engine hash and its rolter key, on KvIndex's LRU list (prev is the more
// recent neighbour). A free node is chained through `next`.
struct KvNode {
  uint64_t engine_hash = 0;
  uint64_t key = 0;
  uint32_t prev = kKvNil;
  uint32_t next = kKvNil;
};

class KvKeyCounts {
 public:
  bool contains(uint64_t key) const { return key == 0 ? zero_count_ > 0 : find(key) != kNone; }
  // Counts one more block with `key`.
  void add(uint64_t key);
  // Counts one block with `key` fewer; the key goes when none is left (nothing when absent).
  void remove(uint64_t key);
  void clear();
  size_t memory_bytes() const;

 private:
  static constexpr size_t kNone = SIZE_MAX;
  size_t find(uint64_t key) const;
  void grow();

  std::vector<uint64_t> keys_;    // 0 marks an empty slot
  std::vector<uint32_t> counts_;  // beside keys_, slot for slot
  size_t size_ = 0;
  int shift_ = 64;           // 64 - log2(slots)
  uint32_t zero_count_ = 0;  // the key 0 cannot sit in a slot (it marks empty), so it is counted here
};

class KvEngineSlots {
 public:
  // The node holding `engine_hash`, or kKvNil.
  uint32_t find(uint64_t engine_hash, const std::vector<KvNode>& nodes) const;
  // REQUIRES: no node holds nodes[node].engine_hash yet.
  void insert(uint32_t node, const std::vector<KvNode>& nodes);
  // Takes nodes[node] out (nothing when it is not in).
  void erase(uint32_t node, const std::vector<KvNode>& nodes);
  void clear();
  size_t memory_bytes() const { return slots_.capacity() * sizeof(uint32_t); }

 private:
  void grow(const std::vector<KvNode>& nodes);

  std::vector<uint32_t> slots_;  // node index, kKvNil when empty
  size_t size_ = 0;
  int shift_ = 64;
};

}  // namespace rolter
