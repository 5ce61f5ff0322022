// SharedPrefixStream: carries what the node's prefix trees learn to the other gateway nodes and
// back (SPEC §6.17), through one Redis stream ([shared_state]).
//
// Every insertion a balancer publishes (balance/prefix/prefix_sharing.h) is appended to the stream
// `key` (XADD ... MAXLEN ~ max_entries, fields n = this node, t = tree, c = candidate, p = text);
// the entries other nodes append are read back (XREAD BLOCK) and inserted into this node's trees.
// When the node starts, reconnects, or a reload attaches new trees, the last replay_entries
// entries are read first (oldest first, this node's own included), so a restarted node knows what
// the fleet served lately. What is shared is a prompt's text: the stream holds prompts, and its
// Redis deserves the care the engines' logs do.
//
// Failure: an unreachable or failing Redis is logged once per run of failures (and its end), the
// outbox is emptied meanwhile, and reconnects back off (250 ms doubling to 10 s). The node routes
// on its own trees throughout: as a single node would, never with an error.
//
// Follows the snapshot: [shared_state] read from each new snapshot; a changed address or key
// reconnects, an empty redis_url stops sharing.
//
// Thread-safety: start() and stop() from one thread; the loop runs on its own thread.
#pragma once

#include <memory>

#include "common/random.h"

namespace rolter {

class PrefixSharing;
class SnapshotStore;

class SharedPrefixStream {
 public:
  // `store`, `hub` and `random` must outlive the object.
  SharedPrefixStream(SnapshotStore& store, PrefixSharing& hub, Random& random = default_random());
  ~SharedPrefixStream();
  SharedPrefixStream(const SharedPrefixStream&) = delete;
  SharedPrefixStream& operator=(const SharedPrefixStream&) = delete;

  void start();
  // Stops at the next turn (at most one blocking read, 100 ms, later). Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rolter
