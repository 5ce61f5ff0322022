#include "balance/prefix/prefix_tree.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace rolter {
namespace {

// Slots are first reserved in steps of this many nodes, then doubled: a route that sees little
// traffic keeps a small tree, a busy one reallocates only ~log2(max_nodes / 1024) times.
constexpr size_t kInitialNodes = 1024;

// Eight bytes per step: a 32 KiB match compares 32 KiB of text, and a byte loop made that most of
// a pick's cost.
size_t common_prefix(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x;
    uint64_t y;
    std::memcpy(&x, a.data() + i, 8);
    std::memcpy(&y, b.data() + i, 8);
    if (x != y) {
      // The lowest differing byte comes first in memory on a little-endian machine.
      if constexpr (std::endian::native == std::endian::little) {
        return i + static_cast<size_t>(std::countr_zero(x ^ y)) / 8;
      }
      break;
    }
  }
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

// Sets out[c] = value for every candidate c < n whose bit is set in bits[0, words).
void assign_bits(const uint64_t* bits, const uint64_t* minus, size_t words, size_t n,
                 uint32_t value, std::span<uint32_t> out) {
  for (size_t w = 0; w < words; ++w) {
    uint64_t word = minus == nullptr ? bits[w] : bits[w] & ~minus[w];
    while (word != 0) {
      const size_t c = w * 64 + static_cast<size_t>(std::countr_zero(word));
      if (c < n) out[c] = value;
      word &= word - 1;
    }
  }
}

// The nodes one insert may add before it evicts: one split and a chain of labels.
size_t insert_slack(size_t max_text_bytes) {
  return 1 + (max_text_bytes + PrefixTree::kMaxLabel - 1) / PrefixTree::kMaxLabel;
}

// Indices are uint32 with UINT32_MAX as "none": the cap must leave room for the slack and root.
// Text is held to 1 GiB so that room exists.
PrefixTreeOptions bounded(PrefixTreeOptions options) {
  options.max_text_bytes = std::min(options.max_text_bytes, size_t{1} << 30);
  const size_t limit = size_t{UINT32_MAX} - insert_slack(options.max_text_bytes) - 2;
  options.max_nodes = std::min(options.max_nodes, limit);
  return options;
}

}  // namespace

PrefixTree::PrefixTree(size_t candidate_count, Options options)
    : count_(candidate_count),
      words_((candidate_count + 63) / 64),
      options_(bounded(options)),
      insert_slack_(insert_slack(options_.max_text_bytes)) {
  nodes_.emplace_back();
  nodes_[kRoot].lru_prev = kRoot;
  nodes_[kRoot].lru_next = kRoot;
  masks_.resize(words_);
}

std::string_view PrefixTree::label(uint32_t node) const {
  return std::string_view(nodes_[node].label, nodes_[node].label_len);
}

uint32_t PrefixTree::find_child(uint32_t node, char first) const {
  // Children start with distinct bytes, so a node has at most 256 and the scan is bounded.
  for (uint32_t c = nodes_[node].first_child; c != kNone; c = nodes_[c].next_sibling) {
    if (nodes_[c].label[0] == first) return c;
  }
  return kNone;
}

void PrefixTree::mark(uint32_t node, size_t candidate) {
  mask(node)[candidate / 64] |= uint64_t{1} << (candidate % 64);
}

void PrefixTree::match(std::string_view text, std::span<uint32_t> matched_bytes) const {
  std::fill(matched_bytes.begin(), matched_bytes.end(), 0);
  const size_t n = std::min(matched_bytes.size(), count_);
  ReaderMutexLock lock(mutex_);
  uint32_t node = kRoot;
  size_t depth = 0;
  while (depth < text.size()) {
    const uint32_t child = find_child(node, text[depth]);
    if (child == kNone) break;
    const size_t common = common_prefix(label(child), text.substr(depth));
    // Masks shrink along a path: a candidate on `node` but not on `child` stops at this depth.
    assign_bits(mask(node), mask(child), words_, n, static_cast<uint32_t>(depth), matched_bytes);
    node = child;
    depth += common;
    if (common < nodes_[child].label_len) break;  // the text leaves the tree inside this edge
  }
  assign_bits(mask(node), nullptr, words_, n, static_cast<uint32_t>(depth), matched_bytes);
}

void PrefixTree::insert(std::string_view text, size_t candidate) {
  if (candidate >= count_) return;
  text = text.substr(0, std::min(text.size(), options_.max_text_bytes));
  WriterMutexLock lock(mutex_);
  path_.clear();
  mark(kRoot, candidate);
  uint32_t node = kRoot;
  size_t pos = 0;
  while (pos < text.size()) {
    uint32_t child = find_child(node, text[pos]);
    if (child == kNone) {
      append_chain(node, text.substr(pos), candidate);
      break;
    }
    const size_t common = common_prefix(label(child), text.substr(pos));
    // Split where the text leaves (or ends inside) the edge, so the mark covers only what matched.
    if (common < nodes_[child].label_len) child = split(child, common);
    mark(child, candidate);
    path_.push_back(child);
    node = child;
    pos += common;
  }
  // Leaf first, then each ancestor: a parent ends up at least as recent as its children, so the
  // LRU tail is always a leaf.
  for (auto it = path_.rbegin(); it != path_.rend(); ++it) {
    lru_unlink(*it);
    lru_push_front(*it);
  }
  while (live_ > options_.max_nodes) evict_lru_leaf();
}

void PrefixTree::append_chain(uint32_t node, std::string_view rest, size_t candidate) {
  while (!rest.empty()) {
    const size_t len = std::min(rest.size(), kMaxLabel);
    node = allocate(node, rest.substr(0, len));
    mark(node, candidate);
    path_.push_back(node);
    rest.remove_prefix(len);
  }
}

void PrefixTree::grow() {
  const size_t limit = options_.max_nodes + insert_slack_ + 1;
  const size_t target = std::min(limit, std::max(kInitialNodes, nodes_.capacity() * 2));
  nodes_.reserve(target);
  masks_.reserve(target * words_);
}

uint32_t PrefixTree::allocate(uint32_t parent, std::string_view text) {
  uint32_t index;
  if (free_head_ != kNone) {
    index = free_head_;
    free_head_ = nodes_[index].next_sibling;
    std::fill_n(mask(index), words_, 0);
  } else {
    if (nodes_.size() == nodes_.capacity()) grow();
    index = static_cast<uint32_t>(nodes_.size());
    nodes_.emplace_back();
    masks_.resize(masks_.size() + words_);
  }
  Node& fresh = nodes_[index];
  fresh = Node{};
  fresh.parent = parent;
  fresh.label_len = static_cast<uint8_t>(text.size());
  std::memcpy(fresh.label, text.data(), text.size());
  fresh.next_sibling = nodes_[parent].first_child;
  nodes_[parent].first_child = index;
  lru_push_front(index);
  ++live_;
  return index;
}

uint32_t PrefixTree::split(uint32_t node, size_t keep) {
  // The new node takes the head of the label and the old node keeps the tail, so the old node's
  // children need no new parent. The head starts with the same byte, so it replaces the old node
  // in the parent's child list.
  const uint32_t parent = nodes_[node].parent;
  char head_label[kMaxLabel];  // a copy: allocate() may move the nodes
  std::memcpy(head_label, nodes_[node].label, keep);
  unlink_child(node);
  const uint32_t head = allocate(parent, std::string_view(head_label, keep));
  std::copy_n(mask(node), words_, mask(head));
  Node& tail = nodes_[node];
  const size_t rest = tail.label_len - keep;
  std::memmove(tail.label, tail.label + keep, rest);
  tail.label_len = static_cast<uint8_t>(rest);
  tail.parent = head;
  tail.next_sibling = kNone;
  nodes_[head].first_child = node;
  return head;
}

void PrefixTree::unlink_child(uint32_t node) {
  uint32_t* link = &nodes_[nodes_[node].parent].first_child;
  while (*link != node) link = &nodes_[*link].next_sibling;
  *link = nodes_[node].next_sibling;
}

void PrefixTree::lru_unlink(uint32_t node) {
  Node& n = nodes_[node];
  nodes_[n.lru_prev].lru_next = n.lru_next;
  nodes_[n.lru_next].lru_prev = n.lru_prev;
}

void PrefixTree::lru_push_front(uint32_t node) {
  const uint32_t old_front = nodes_[kRoot].lru_next;
  nodes_[node].lru_prev = kRoot;
  nodes_[node].lru_next = old_front;
  nodes_[old_front].lru_prev = node;
  nodes_[kRoot].lru_next = node;
}

void PrefixTree::evict_lru_leaf() {
  uint32_t victim = nodes_[kRoot].lru_prev;
  if (victim == kRoot) return;
  // The touch order makes the tail a leaf, so this loop does not run; it keeps eviction from
  // orphaning a subtree should that order ever change.
  while (nodes_[victim].first_child != kNone) victim = nodes_[victim].first_child;
  lru_unlink(victim);
  unlink_child(victim);
  nodes_[victim].parent = kNone;
  nodes_[victim].next_sibling = free_head_;
  free_head_ = victim;
  --live_;
}

size_t PrefixTree::node_count() const {
  ReaderMutexLock lock(mutex_);
  return live_;
}

size_t PrefixTree::memory_bytes() const {
  ReaderMutexLock lock(mutex_);
  return nodes_.capacity() * sizeof(Node) + masks_.capacity() * sizeof(uint64_t) +
         path_.capacity() * sizeof(uint32_t);
}

std::string PrefixTree::lru_tail_text() const {
  ReaderMutexLock lock(mutex_);
  std::string text;
  for (uint32_t n = nodes_[kRoot].lru_prev; n != kRoot; n = nodes_[n].parent) {
    text.insert(0, label(n));
  }
  return text;
}

std::optional<std::string> PrefixTree::check_invariants() const {
  ReaderMutexLock lock(mutex_);
  std::vector<uint32_t> rank(nodes_.size(), kNone);
  if (auto problem = check_lru(rank)) return problem;
  return check_tree(rank);
}

// Walks the LRU list front to back, writing each node's position (0 = most recent) into rank.
std::optional<std::string> PrefixTree::check_lru(std::vector<uint32_t>& rank) const {
  uint32_t position = 0;
  uint32_t prev = kRoot;
  for (uint32_t n = nodes_[kRoot].lru_next; n != kRoot; n = nodes_[n].lru_next) {
    if (n >= nodes_.size() || rank[n] != kNone || position > live_) {
      return "LRU list is corrupt at position " + std::to_string(position);
    }
    if (nodes_[n].lru_prev != prev)
      return "LRU prev link of node " + std::to_string(n) + " is wrong";
    rank[n] = position++;
    prev = n;
  }
  if (position != live_) {
    return "LRU list holds " + std::to_string(position) + " nodes, " + std::to_string(live_) +
           " are live";
  }
  const uint32_t tail = nodes_[kRoot].lru_prev;
  if (tail != kRoot && nodes_[tail].first_child != kNone) {
    return "LRU tail " + std::to_string(tail) + " is not a leaf";
  }
  return std::nullopt;
}

// Walks the tree from the root (iteratively: a path may be 32 Ki nodes deep).
std::optional<std::string> PrefixTree::check_tree(const std::vector<uint32_t>& rank) const {
  size_t reached = 0;
  std::vector<uint32_t> stack = {kRoot};
  while (!stack.empty()) {
    const uint32_t node = stack.back();
    stack.pop_back();
    bool first_bytes[256] = {};
    for (uint32_t c = nodes_[node].first_child; c != kNone; c = nodes_[c].next_sibling) {
      const std::string at = "node " + std::to_string(c) + ": ";
      if (++reached > live_) return at + "more nodes reachable than live";
      if (nodes_[c].parent != node) return at + "parent link disagrees with the child list";
      if (nodes_[c].label_len == 0 || nodes_[c].label_len > kMaxLabel) return at + "bad label";
      const auto first = static_cast<unsigned char>(nodes_[c].label[0]);
      if (first_bytes[first]) return at + "two siblings start with the same byte";
      first_bytes[first] = true;
      for (size_t w = 0; w < words_; ++w) {
        if ((mask(c)[w] & ~mask(node)[w]) != 0) return at + "candidate missing on the parent";
      }
      if (node != kRoot && rank[node] > rank[c]) return at + "less recent than its child";
      stack.push_back(c);
    }
  }
  if (reached != live_) {
    return std::to_string(reached) + " nodes reachable, " + std::to_string(live_) + " live";
  }
  return std::nullopt;
}

}  // namespace rolter
