// PrefixTree: which candidates recently served which conversation text (SPEC §6.6), for
// cache_aware and the prefix affinity scorer. One tree per balancer (or scorer).
//
// A path-compressed (radix) byte tree: each node holds an edge label of at most kMaxLabel bytes,
// stored inline, and a bitmask of the candidates that served a prompt through it. The masks live in
// a parallel vector, ceil(n / 64) words per node, so any candidate count works with no allocation
// per node. A candidate marked on a node is marked on every ancestor, so masks only shrink along a
// path.
//
// Memory is bounded: at most Options::max_nodes nodes hold text (the root is extra), with LRU
// eviction. Because a label is capped, the node cap is a byte cap: node and mask storage never
// exceeds (max_nodes + slack + 1) x (sizeof(Node) + 8 x ceil(n / 64)) bytes, where slack =
// 1 + ceil(max_text_bytes / kMaxLabel) = 513 is what one insert may add before it evicts. That is
// 88 + 8 = 96 bytes per node up to 64 candidates, about 96 MB for the default 1,000,000 nodes
// (memory_bytes() reports the real figure; prefix_tree_bench.cc measures it).
//
// Eviction is O(1): every node but the root sits on an intrusive doubly-linked LRU list, and an
// insert touches its path leaf first, then each ancestor, so a parent is always at least as recent
// as its descendants. The list tail is therefore always a leaf, unlinked in O(1) (plus a scan of
// its parent's at most 256 children); freed slots are reused through an index free list.
//
// Thread-safety: every method may be called concurrently. match() takes a shared lock, so picks
// never block each other; insert() (from observe) takes the exclusive lock. Sharding the tree by
// first bytes was rejected: conversations share a system prompt, so one shard would hold nearly
// everything while its share of the node cap would be a fraction of it.
//
//   PrefixTree tree(candidates.size());
//   tree.insert(ctx.prompt, served_by);
//   std::vector<uint32_t> matched(candidates.size());
//   tree.match(ctx.prompt, matched);  // matched[i]: leading bytes candidate i served
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "balance/route_context.h"
#include "common/mutex.h"

namespace rolter {

// Outside the class so `Options options = {}` can default a constructor argument in it.
struct PrefixTreeOptions {
  // 1,000,000 nodes (SPEC §6.6): about 64 MB of distinct text, some two thousand 32 KiB prompts.
  size_t max_nodes = 1'000'000;
  // insert() keeps only this many leading bytes of its text (at most 1 GiB); it bounds the nodes
  // one insert adds.
  size_t max_text_bytes = RouteContext::kPromptBound;
};

class PrefixTree {
 public:
  using Options = PrefixTreeOptions;

  // 64 bytes: long enough that a 32 KiB prompt is a path of 512 nodes, short enough that a node
  // stays under two cache lines and a split copies little.
  static constexpr size_t kMaxLabel = 64;

  explicit PrefixTree(size_t candidate_count, Options options = {});

  PrefixTree(const PrefixTree&) = delete;
  PrefixTree& operator=(const PrefixTree&) = delete;

  size_t candidate_count() const { return count_; }
  const Options& options() const { return options_; }

  // Writes, for every candidate i, how many leading bytes of `text` it served: the depth of the
  // longest path prefix whose nodes all carry i (a match that ends inside an edge counts for the
  // candidates of that edge's node). No allocation.
  // REQUIRES: matched_bytes.size() == candidate_count() (extra entries are set to 0, missing ones
  // are skipped).
  void match(std::string_view text, std::span<uint32_t> matched_bytes) const EXCLUDES(mutex_);

  // Marks `candidate` on every node of text's path (its first max_text_bytes bytes), splitting an
  // edge where the text leaves it, then evicts least recently used leaves while over max_nodes.
  // A candidate out of range is ignored.
  void insert(std::string_view text, size_t candidate) EXCLUDES(mutex_);

  // Nodes holding text (the root excluded). Never above max_nodes once insert() returns.
  size_t node_count() const EXCLUDES(mutex_);
  // Bytes held by the node and mask storage (vector capacities).
  size_t memory_bytes() const EXCLUDES(mutex_);
  // For tests: nullopt when every structural invariant holds (child and sibling links agree,
  // masks shrink along paths, the LRU list holds every live node, a parent is at least as recent
  // as its children, the tail is a leaf), else what is broken. O(nodes).
  std::optional<std::string> check_invariants() const EXCLUDES(mutex_);
  // For tests: the text of the least recently used node's path, "" when the tree is empty.
  std::string lru_tail_text() const EXCLUDES(mutex_);

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  static constexpr uint32_t kRoot = 0;

  struct Node {
    uint32_t parent = kNone;
    uint32_t first_child = kNone;
    uint32_t next_sibling = kNone;  // also links the free list
    uint32_t lru_prev = kNone;      // the root is the list's sentinel: its next is the most recent
    uint32_t lru_next = kNone;
    uint8_t label_len = 0;
    char label[kMaxLabel];
  };

  uint64_t* mask(uint32_t node) REQUIRES(mutex_) {
    return masks_.data() + size_t{node} * words_;
  }
  const uint64_t* mask(uint32_t node) const REQUIRES_SHARED(mutex_) {
    return masks_.data() + size_t{node} * words_;
  }
  std::string_view label(uint32_t node) const REQUIRES_SHARED(mutex_);
  uint32_t find_child(uint32_t node, char first) const REQUIRES_SHARED(mutex_);
  void mark(uint32_t node, size_t candidate) REQUIRES(mutex_);

  void grow() REQUIRES(mutex_);
  uint32_t allocate(uint32_t parent, std::string_view label) REQUIRES(mutex_);
  uint32_t split(uint32_t node, size_t keep) REQUIRES(mutex_);
  void append_chain(uint32_t node, std::string_view rest, size_t candidate) REQUIRES(mutex_);
  void unlink_child(uint32_t node) REQUIRES(mutex_);
  void lru_unlink(uint32_t node) REQUIRES(mutex_);
  void lru_push_front(uint32_t node) REQUIRES(mutex_);
  void evict_lru_leaf() REQUIRES(mutex_);
  std::optional<std::string> check_lru(std::vector<uint32_t>& rank) const
      REQUIRES_SHARED(mutex_);
  std::optional<std::string> check_tree(const std::vector<uint32_t>& rank) const
      REQUIRES_SHARED(mutex_);

  const size_t count_;
  const size_t words_;  // ceil(count_ / 64)
  const Options options_;
  // One insert adds at most one split node and a chain of ceil(max_text_bytes / kMaxLabel) nodes.
  const size_t insert_slack_;

  mutable SharedMutex mutex_;
  std::vector<Node> nodes_ GUARDED_BY(mutex_);      // index 0 is the root
  std::vector<uint64_t> masks_ GUARDED_BY(mutex_);  // words_ per node, parallel to nodes_
  // insert()'s scratch, kept to avoid an allocation per insert.
  std::vector<uint32_t> path_ GUARDED_BY(mutex_);
  uint32_t free_head_ GUARDED_BY(mutex_) = kNone;  // slots freed by eviction, via next_sibling
  size_t live_ GUARDED_BY(mutex_) = 0;             // nodes holding text
};

}  // namespace rolter
