#include "server/server.h"

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <pthread.h>

#include <atomic>
#include <cerrno>
#include <future>
#include <string>
#include <string_view>

#include "observe/metrics.h"
#include "observe/worker_cells.h"
#include "server/http_session.h"
#include "server/tls_connection.h"
#include "server/worker.h"
#include "tls/server_context.h"

namespace rolter {

struct Server::Acceptor {
  explicit Acceptor(asio::io_context& io) : acceptor(io) {}
  asio::ip::tcp::acceptor acceptor;
  using WorkGuard = asio::executor_work_guard<asio::io_context::executor_type>;
  std::vector<WorkGuard> guards;  // keep idle workers running
};

Server::Server(SnapshotStore& store, unsigned workers) : store_(store) {
  if (workers == 0) workers = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 0; i < workers; ++i) {
    workers_.push_back(std::make_unique<Worker>(i, state_));
  }
  acceptor_ = std::make_unique<Acceptor>(workers_[0]->io());
  for (auto& worker : workers_) {
    acceptor_->guards.emplace_back(worker->io().get_executor());
    store_.subscribe(
        [w = worker.get()](std::shared_ptr<const Snapshot> s) { w->set_snapshot(std::move(s)); });
  }
}

Server::~Server() { stop(); }

namespace {

tl::expected<uint16_t, std::string> bind_acceptor(asio::ip::tcp::acceptor& acceptor,
                                                  const std::string& host, uint16_t port) {
  error_code ec;
  auto address = asio::ip::make_address(host, ec);
  if (ec) return tl::unexpected("listen address '" + host + "': " + ec.message());
  asio::ip::tcp::endpoint endpoint(address, port);
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return tl::unexpected("cannot listen on " + host + ":" + std::to_string(port) + ": " +
                          ec.message());
  }
  return acceptor.local_endpoint().port();
}

// Out of descriptors, the listener waits before trying again: the pending connection stays in
// the kernel's backlog, and a retry at once would fail the same way (a busy spin).
constexpr auto kMinAcceptBackoff = std::chrono::milliseconds(10);
constexpr auto kMaxAcceptBackoff = std::chrono::milliseconds(1000);
// At server.max_connections the listener looks again this often.
constexpr auto kAtCapPoll = std::chrono::milliseconds(5);

// An accept() failure is an errno (Asio's system category), so it is read by value. (Comparing
// categories here also trips UBSan's vptr check on Boost 1.81's constant-initialised categories.)
std::string_view accept_error_reason(const error_code& ec) {
  switch (ec.value()) {
    case EMFILE:
      return "emfile";
    case ENFILE:
      return "enfile";
    case ENOBUFS:
    case ENOMEM:
      return "no_memory";
    default:
      return "other";
  }
}

// Counts one open connection for its whole life (server.max_connections, rolter_connections).
// The listener counts it up as it accepts, so the cap holds before the coroutine first runs.
struct OpenConnection {
  explicit OpenConnection(ServerState& s) : state(s) {
    if (state.metrics != nullptr) state.metrics->connections_changed(+1);
  }
  ~OpenConnection() {
    state.connection_closed();
    if (state.metrics != nullptr) state.metrics->connections_changed(-1);
  }
  ServerState& state;
};

Task<void> serve_counted(Worker& worker, TimedStream stream, Listener listener) {
  OpenConnection open(worker.server());
  ClientPeer peer{.listener = listener, .ip = client_ip(stream.socket())};
  co_await serve_connection(worker, std::move(stream), std::move(peer));
}

Task<void> serve_tls_counted(Worker& worker, asio::ip::tcp::socket socket, Listener listener,
                             const TlsListener& tls) {
  OpenConnection open(worker.server());
  co_await serve_tls_connection(worker, std::move(socket), listener, tls);
}

// Waits until the listener may accept another connection (below server.max_connections).
Task<void> wait_for_room(asio::steady_timer& timer, Worker& first, ServerState& state) {
  for (;;) {
    const auto& snapshot = first.snapshot();
    const uint64_t cap = snapshot ? snapshot->config().server.max_connections : 0;
    if (cap == 0 || state.connections() < cap) co_return;
    timer.expires_after(kAtCapPoll);
    auto [ec] = co_await timer.async_wait(kNoThrow);
    if (ec) co_return;
  }
}

// Waits after an accept failed for want of resources, longer each time in a row.
Task<void> back_off(asio::steady_timer& timer, std::chrono::milliseconds& backoff,
                    const error_code& ec, std::string_view reason) {
  if (backoff == kMinAcceptBackoff) {
    spdlog::warn(
        "accept: {} ({}): pausing new connections; raise the file limit or set "
        "server.max_connections",
        ec.message(), reason);
  }
  timer.expires_after(backoff);
  co_await timer.async_wait(kNoThrow);
  backoff = std::min(backoff * 2, kMaxAcceptBackoff);
}

// `tls` is null on a plaintext listener.
Task<void> accept_loop(asio::ip::tcp::acceptor& acceptor,
                       std::vector<std::unique_ptr<Worker>>& workers, Listener listener,
                       const TlsListener* tls) {
  ServerState& state = workers[0]->server();
  asio::steady_timer pause(co_await asio::this_coro::executor);
  std::chrono::milliseconds backoff = kMinAcceptBackoff;
  size_t next = 0;
  for (;;) {
    // The cap guards the data plane; scrapes and probes still get through at it.
    if (listener == Listener::kMain) co_await wait_for_room(pause, *workers[0], state);
    Worker& worker = *workers[next];
    next = (next + 1) % workers.size();
    // The socket is created on the chosen worker's io_context: the connection lives there.
    auto [ec, socket] = co_await acceptor.async_accept(worker.io(), kNoThrow);
    if (!acceptor.is_open() || ec.value() == ECANCELED) co_return;  // closed: a drain
    if (ec) {
      const std::string_view reason = accept_error_reason(ec);
      if (state.metrics != nullptr) state.metrics->accept_error(reason);
      // Anything else (a connection reset while queued) concerns that connection alone.
      if (reason != "other") co_await back_off(pause, backoff, ec, reason);
      continue;
    }
    backoff = kMinAcceptBackoff;
    state.connection_opened();
    socket.set_option(asio::ip::tcp::no_delay(true), ec);
    if (tls != nullptr) {
      asio::co_spawn(worker.io(), serve_tls_counted(worker, std::move(socket), listener, *tls),
                     asio::detached);
      continue;
    }
    socket.non_blocking(true, ec);  // responses are written at once when they fit (net/write_now.h)
    asio::co_spawn(worker.io(), serve_counted(worker, TimedStream(std::move(socket)), listener),
                   asio::detached);
  }
}

}  // namespace

tl::expected<uint16_t, std::string> Server::listen(const std::string& host, uint16_t port) {
  return bind_acceptor(acceptor_->acceptor, host, port);
}

tl::expected<uint16_t, std::string> Server::listen_metrics(const std::string& host, uint16_t port) {
  metrics_acceptor_ = std::make_unique<Acceptor>(workers_[0]->io());
  return bind_acceptor(metrics_acceptor_->acceptor, host, port);
}

tl::expected<void, std::string> Server::use_tls(const std::string& cert_file,
                                                const std::string& key_file) {
  auto context = make_server_context(cert_file, key_file);
  if (!context) return tl::unexpected(context.error());
  tls_ = std::make_unique<TlsListener>();
  tls_->context = std::move(*context);
  return {};
}

void Server::start() {
  if (tls_ && state_.metrics != nullptr) {
    tls_->handshake_failures = HandshakeFailures::registered(*state_.metrics);
  }
  asio::co_spawn(workers_[0]->io(),
                 accept_loop(acceptor_->acceptor, workers_, Listener::kMain, tls_.get()),
                 asio::detached);
  if (metrics_acceptor_) {
    asio::co_spawn(workers_[0]->io(),
                   accept_loop(metrics_acceptor_->acceptor, workers_, Listener::kMetrics, nullptr),
                   asio::detached);
  }
  for (auto& worker : workers_) {
    threads_.emplace_back([w = worker.get()] {
      // Named for top -H, perf and strace -p: "rolter-wN" (a name holds 15 characters).
      const std::string name = "rolter-w" + std::to_string(w->index());
      ::pthread_setname_np(::pthread_self(), name.c_str());
      // The request path's counters and histograms go to this worker's own cells.
      WorkerCells::set_thread_slot(w->index() + 1);
      w->io().run();
    });
  }
  state_.set_ready(true);
}

void Server::begin_drain() {
  if (!state_.start_draining()) return;
  // The metrics listener stays open until stop(): probes see the drain on /readyz.
  asio::post(workers_[0]->io(), [this] {
    error_code ignored;
    acceptor_->acceptor.close(ignored);
  });
  for (auto& worker : workers_) {
    asio::post(worker->io(), [w = worker.get()] { w->close_idle(); });
  }
}

uint64_t Server::drain(std::chrono::milliseconds timeout) {
  begin_drain();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (state_.active_requests() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return state_.active_requests();
}

void Server::stop() {
  if (threads_.empty()) return;
  acceptor_->guards.clear();
  for (auto& worker : workers_) worker->io().stop();
  for (auto& thread : threads_) thread.join();
  threads_.clear();
  if (metrics_acceptor_) {
    error_code ignored;
    metrics_acceptor_->acceptor.close(ignored);  // no thread runs its io_context any more
  }
}

}  // namespace rolter
