// PrefixSharing: what the prefix trees of one gateway node learn, shared with the other nodes
// (SPEC §6.17), so that a conversation whose turns reach different nodes still finds the engine
// that holds its prefix.
//
// The hub does no I/O. Balancers publish each insertion (observe(): which candidate served which
// text) into a bounded outbox; a transport (collect/shared_prefixes/, Redis) takes the outbox,
// carries it to the other nodes, and delivers what they published to the trees attached here. A
// tree is named by its pool and strategy ("<pool>|<strategy>"), its candidates by their identity
// ("<provider>/<model>@<base_url>"): both are the same on every node that runs one configuration,
// and across reloads. An insertion for a tree or a candidate this node does not have is dropped.
//
// Nothing here is on the pick path: a pick reads its own tree only. A full outbox drops (and
// counts) the insertion rather than wait, so a slow or absent transport costs a node the sharing,
// never a request: it routes as a single node would.
//
//   PrefixSharing hub;
//   PrefixShareLink link(&hub, "chat|cache_aware", candidates, tree);  // in the balancer
//   link.publish(index, prompt);                                      // in observe()
//   auto batch = hub.take_outbox();                                    // the transport
//   for (const auto& insert : received) hub.deliver(insert);
//
// Thread-safety: every method may be called from any thread. publish() takes the outbox's lock for
// one move; deliver() holds the attachment lock while it inserts, so a tree cannot be detached
// (its balancer destroyed) in the middle.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "balance/candidate.h"
#include "common/mutex.h"

namespace rolter {

class PrefixTree;

class PrefixSharing {
 public:
  struct Insert {
    std::string tree;       // "<pool>|<strategy>"
    std::string candidate;  // the candidate's identity
    std::string text;       // what it served (the tree's bounded prompt)
  };

  // 4,096 insertions: a few seconds of a busy node's requests; beyond that the transport is not
  // keeping up and the newest insertions are dropped.
  static constexpr size_t kDefaultOutbox = 4096;
  explicit PrefixSharing(size_t max_outbox = kDefaultOutbox) : max_outbox_(max_outbox) {}
  PrefixSharing(const PrefixSharing&) = delete;
  PrefixSharing& operator=(const PrefixSharing&) = delete;

  // Queues an insertion for the other nodes; false (and counted in dropped()) when the outbox is
  // full.
  bool publish(std::string_view tree, std::string_view candidate, std::string_view text);
  // Everything published since the last call, oldest first.
  std::vector<Insert> take_outbox();

  // Inserts `insert` into every attached tree of that name that has the candidate; the number of
  // trees it went into.
  size_t deliver(const Insert& insert);

  // Whether a tree was attached since the last call (a reload built new, empty trees, or the node
  // just started): the transport then replays what the nodes shared recently.
  bool take_attached();

  uint64_t published() const { return published_.load(std::memory_order_relaxed); }
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  uint64_t delivered() const { return delivered_.load(std::memory_order_relaxed); }

 private:
  friend class PrefixShareLink;
  struct Attached {
    std::string tree;
    std::map<std::string, size_t, std::less<>> index_of;  // candidate identity -> index
    PrefixTree* prefix_tree = nullptr;
  };
  uint64_t attach(Attached attached);
  void detach(uint64_t id);

  const size_t max_outbox_;
  Mutex outbox_mu_;
  std::vector<Insert> outbox_ GUARDED_BY(outbox_mu_);
  Mutex attached_mu_;
  std::map<uint64_t, Attached> attached_ GUARDED_BY(attached_mu_);
  uint64_t next_id_ GUARDED_BY(attached_mu_) = 1;
  bool newly_attached_ GUARDED_BY(attached_mu_) = false;
  std::atomic<uint64_t> published_{0};
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> delivered_{0};
};

// A balancer's (or scorer's) tie to the hub: attaches its tree for as long as it lives and
// publishes its insertions under its candidates' identities. A default-constructed link shares
// nothing.
class PrefixShareLink {
 public:
  PrefixShareLink() = default;
  // `hub` null = nothing shared. `hub` and `tree` must outlive the link.
  PrefixShareLink(PrefixSharing* hub, std::string tree_name,
                  std::span<const CandidateSpec> candidates, PrefixTree& tree);
  ~PrefixShareLink();
  PrefixShareLink(const PrefixShareLink&) = delete;
  PrefixShareLink& operator=(const PrefixShareLink&) = delete;

  // Publishes "candidate `index` served `text`"; nothing when not shared or out of range.
  void publish(size_t index, std::string_view text) const;

 private:
  PrefixSharing* hub_ = nullptr;
  std::string tree_name_;
  std::vector<std::string> identities_;
  uint64_t id_ = 0;
};

// The name a pool's tree is shared under.
std::string shared_tree_name(std::string_view pool, std::string_view strategy);

}  // namespace rolter
