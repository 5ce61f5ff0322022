// Worker: one event-loop thread of the data plane, and everything it owns.
//
// The server runs one Worker per core. Each has its own io_context, its own copy of the current
// snapshot pointer, its own upstream connection pool and request inspector, so serving a request
// takes no lock and shares no cache line with other workers except the in-flight atomics.
//
// Thread-safety: a Worker's members are used only on its own thread. set_snapshot() may be called
// from any thread: it posts to the worker's loop.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>

#include <memory>

#include "inspect/request_inspector.h"
#include "proxy/decision_cache.h"
#include "proxy/forwarder.h"
#include "server/worker_tenancy.h"
#include "snapshot/snapshot.h"
#include "upstream/connection_pool.h"

namespace rolter {

class ServerState;

class Worker {
 public:
  Worker(unsigned index, ServerState& server);

  unsigned index() const { return index_; }
  asio::io_context& io() { return io_; }
  ServerState& server() { return server_; }

  // The snapshot new requests on this worker use.
  const std::shared_ptr<const Snapshot>& snapshot() const { return snapshot_; }
  void set_snapshot(std::shared_ptr<const Snapshot> snapshot);

  RequestInspector& inspector() { return inspector_; }
  Forwarder& forwarder() { return forwarder_; }
  ConnectionPool& pool() { return pool_; }
  // The client TLS context of this worker's upstream connections.
  ClientTls tls() const { return tls_; }
  // Policy mode's decision-service verdicts of this worker's sessions (proxy/decision_cache.h).
  DecisionCache& decision_cache() { return decision_cache_; }
  // The limiter and request ids of this worker's accounted requests (SPEC §15).
  WorkerTenancy& tenancy() { return tenancy_; }

  // A connection waiting for its next request, linked into its worker's list while it waits (a
  // drain closes those: they carry no request). The link lives with the connection, so marking a
  // connection idle allocates nothing.
  struct IdleLink {
    TimedStream* stream = nullptr;
    IdleLink* prev = nullptr;
    IdleLink* next = nullptr;
  };
  void add_idle(IdleLink& link) {
    link.prev = &idle_;
    link.next = idle_.next;
    if (idle_.next != nullptr) idle_.next->prev = &link;
    idle_.next = &link;
  }
  void remove_idle(IdleLink& link) {
    link.prev->next = link.next;
    if (link.next != nullptr) link.next->prev = link.prev;
    link.prev = link.next = nullptr;
  }
  // Cancels the reads of idle connections. Call on this worker's thread.
  void close_idle();

 private:
  const unsigned index_;
  ServerState& server_;
  asio::io_context io_{1};  // concurrency hint 1: one thread runs it, so Asio can skip locking
  std::shared_ptr<const Snapshot> snapshot_;
  ClientTls tls_;  // the process's, made at the first https:// connection
  ConnectionPool pool_;
  Forwarder forwarder_;
  RequestInspector inspector_;
  DecisionCache decision_cache_{default_clock()};
  WorkerTenancy tenancy_;
  IdleLink idle_;  // the list's head; its `next` is the first idle connection
};

}  // namespace rolter
