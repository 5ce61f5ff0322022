// Server: the data-plane listener and its worker threads.
//
// One acceptor hands each accepted connection to the next worker in turn; from then on the
// connection lives on that worker's thread only. An optional second listener serves /metrics,
// /healthz and /readyz alone (server.metrics_listen). When the process runs out of file
// descriptors the acceptor backs off instead of spinning, and at server.max_connections it pauses
// until a connection closes. Snapshots reach the workers through the
// SnapshotStore subscription. drain() stops accepting on the main listener, closes idle
// connections, and waits for requests in progress (streams included) to finish, up to a
// deadline; the metrics listener answers until stop(), /readyz with 503 from the drain's start.
// With use_tls() the main listener terminates TLS in front of the same sessions
// (server/tls_connection.h); the metrics listener stays plaintext.
//
// Thread-safety: construct, listen() and run() from one thread; begin_drain(), drain() and stop()
// from any thread.
#pragma once

#include <tl/expected.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "server/server_state.h"
#include "snapshot/snapshot_store.h"

namespace rolter {

class Worker;
struct TlsListener;

class Server {
 public:
  Server(SnapshotStore& store, unsigned workers);
  ~Server();

  // Binds host:port (port 0 = any free port). Returns the bound port or a message.
  tl::expected<uint16_t, std::string> listen(const std::string& host, uint16_t port);
  // Binds the metrics listener. Call before start(), at most once.
  tl::expected<uint16_t, std::string> listen_metrics(const std::string& host, uint16_t port);
  // Makes the main listener speak TLS with this PEM certificate chain and key. Call before
  // start(); the certificate stays for the life of the server (no reload). Returns a message
  // naming the file when it cannot be used.
  tl::expected<void, std::string> use_tls(const std::string& cert_file,
                                          const std::string& key_file);

  // Starts the acceptor and the worker threads; returns at once.
  void start();

  // Stops accepting on the main listener and closes idle connections; from its return, /readyz
  // answers 503. Returns at once; calling it again does nothing more.
  void begin_drain();

  // begin_drain(), then waits until no request is in progress or the timeout passes. Returns the
  // number of requests still in progress.
  uint64_t drain(std::chrono::milliseconds timeout);

  // Stops every worker and joins the threads.
  void stop();

  ServerState& state() { return state_; }
  // How many worker threads serve (each its own event loop), indexed 0 to worker_count() - 1.
  size_t worker_count() const { return workers_.size(); }

 private:
  struct Acceptor;
  SnapshotStore& store_;
  ServerState state_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::unique_ptr<Acceptor> acceptor_;
  std::unique_ptr<Acceptor> metrics_acceptor_;  // null without server.metrics_listen
  std::unique_ptr<TlsListener> tls_;            // null: the main listener is plaintext
  std::vector<std::thread> threads_;
};

}  // namespace rolter
