#include "server/worker.h"

#include <boost/asio/post.hpp>

#include "server/server_state.h"
#include "upstream/upstream_connection.h"

namespace rolter {

Worker::Worker(unsigned index, ServerState& server)
    : index_(index),
      server_(server),
      forwarder_(pool_, tls_, default_clock()),
      tenancy_(io_, index) {}

void Worker::set_snapshot(std::shared_ptr<const Snapshot> snapshot) {
  asio::post(io_, [this, snapshot = std::move(snapshot)]() mutable {
    snapshot_ = std::move(snapshot);
    // A Redis limiter connects now, not on the first limited request.
    if (server_.tenancy != nullptr && snapshot_ != nullptr) {
      tenancy_.prepare(*server_.tenancy, snapshot_->config().limits);
    }
  });
}

void Worker::close_idle() {
  for (IdleLink* link = idle_.next; link != nullptr; link = link->next) link->stream->cancel();
  pool_.clear();
}

}  // namespace rolter
