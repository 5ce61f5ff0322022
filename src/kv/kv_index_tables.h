// The two hash tables behind KvIndex (kv/kv_index.h); private to kv/.
//
// Both are linear-probing open-addressing tables, at most 3/4 full, with backward-shift deletion
// (no tombstones, so a long-lived index never degrades). They are built for bytes per block, which
// is what an index of a million blocks costs:
//   KvKeySet       rolter keys, one entry per held engine block (a key two engine blocks share is
//                  in twice): 8 bytes a slot, and a lookup reads nothing else.
//   KvEngineSlots  engine hash -> node: 4 bytes a slot (the node's index; the hash is read from
//                  the node, which the caller needs anyway).
// A table doubles as it fills, but never past the slots its entry limit needs at 3/4 (not a power
// of two: slots are addressed by multiply-shift, so an index bounded at 1,000,000 blocks has
// 1,333,334 slots, not 2^21). Keys and engine hashes are mixed first: engine hashes may be small
// integers.
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

// Where entries live in a table of `slots` slots, and how far a probe walked.
class KvProbe {
 public:
  size_t slots() const { return slots_; }
  size_t home(uint64_t h) const {
    const uint64_t mixed = h * 0x9E3779B97F4A7C15ULL;  // Fibonacci hashing's multiplier
    return static_cast<size_t>((static_cast<unsigned __int128>(mixed) * slots_) >> 64);
  }
  size_t next(size_t i) const { return i + 1 == slots_ ? 0 : i + 1; }
  // Steps from `from` forward to `to`, wrapping.
  size_t distance(size_t from, size_t to) const {
    return to >= from ? to - from : to + slots_ - from;
  }
  // Whether one more entry would need more slots than there are.
  bool full(size_t size) const { return (size + 1) * 4 > slots_ * 3; }
  // The next size for `size` entries and one more: double, but no more than `limit` entries need
  // (0: no limit).
  static KvProbe grown(const KvProbe& now, size_t size, size_t limit);

 private:
  size_t slots_ = 0;
};

class KvKeySet {
 public:
  bool contains(uint64_t key) const { return key == 0 ? zeros_ > 0 : find(key) != kNone; }
  // Adds one entry of `key` (a key may be in more than once).
  void add(uint64_t key);
  // Removes one entry of `key`, if any.
  void remove(uint64_t key);
  void clear();
  // Entries it will be asked to hold at most (0: no bound); bounds its growth, not its size.
  void set_limit(size_t limit) { limit_ = limit; }
  size_t memory_bytes() const { return keys_.capacity() * sizeof(uint64_t); }

 private:
  static constexpr size_t kNone = SIZE_MAX;
  size_t find(uint64_t key) const;
  void grow();

  KvProbe probe_;
  std::vector<uint64_t> keys_;  // 0 marks an empty slot
  size_t size_ = 0;
  size_t limit_ = 0;
  size_t zeros_ = 0;  // entries of the key 0, which cannot sit in a slot, as it marks empty
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
  void set_limit(size_t limit) { limit_ = limit; }
  size_t memory_bytes() const { return slots_.capacity() * sizeof(uint32_t); }

 private:
  void grow(const std::vector<KvNode>& nodes);

  KvProbe probe_;
  std::vector<uint32_t> slots_;  // node index, kKvNil when empty
  size_t size_ = 0;
  size_t limit_ = 0;
};

}  // namespace rolter
