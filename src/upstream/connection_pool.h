// ConnectionPool: idle keep-alive upstream connections, per instance, for one worker thread.
//
// Each worker owns one pool, so taking and returning a connection needs no lock. Connections are
// keyed by the instance's stable id (fleet/load_tracker.h), so pooled connections survive reloads.
//
// Thread-safety: none; use only on the owning worker's thread.
#pragma once

#include <memory>
#include <vector>

#include "upstream/upstream_connection.h"

namespace rolter {

class ConnectionPool {
 public:
  // Idle connections kept per instance; beyond this a returned connection is closed. 64 covers a
  // worker's share of a few hundred concurrent streams without hoarding engine sockets.
  static constexpr size_t kMaxIdlePerInstance = 64;

  // An idle connection to the instance, most recently used first, or nullptr. Connections the
  // upstream wrote to (or closed) while idle are closed instead of returned.
  std::unique_ptr<UpstreamConnection> take(uint32_t instance_id);

  // Keeps `connection` for reuse, unless bytes were read past its response. (Bytes that reach
  // its socket later are found by take().)
  // REQUIRES: it finished a final response with complete framing and keep-alive.
  void give_back(std::unique_ptr<UpstreamConnection> connection);

  // Closes every idle connection (drain, shutdown).
  void clear() { idle_.clear(); }

 private:
  std::vector<std::vector<std::unique_ptr<UpstreamConnection>>> idle_;  // by instance id
};

}  // namespace rolter
