#include "server/server.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>

#include <atomic>
#include <future>

#include "server/http_session.h"
#include "server/worker.h"

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
    store_.subscribe([w = worker.get()](std::shared_ptr<const Snapshot> s) {
      w->set_snapshot(std::move(s));
    });
  }
}

Server::~Server() { stop(); }

tl::expected<uint16_t, std::string> Server::listen(const std::string& host, uint16_t port) {
  error_code ec;
  auto address = asio::ip::make_address(host, ec);
  if (ec) return tl::unexpected("listen address '" + host + "': " + ec.message());
  asio::ip::tcp::endpoint endpoint(address, port);
  auto& acceptor = acceptor_->acceptor;
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

namespace {

Task<void> accept_loop(asio::ip::tcp::acceptor& acceptor,
                       std::vector<std::unique_ptr<Worker>>& workers) {
  size_t next = 0;
  for (;;) {
    Worker& worker = *workers[next];
    next = (next + 1) % workers.size();
    // The socket is created on the chosen worker's io_context: the connection lives there.
    auto [ec, socket] = co_await acceptor.async_accept(worker.io(), kNoThrow);
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
    if (ec) continue;  // e.g. EMFILE: keep serving the connections we have
    socket.set_option(asio::ip::tcp::no_delay(true), ec);
    asio::co_spawn(worker.io(), serve_connection(worker, beast::tcp_stream(std::move(socket))),
                   asio::detached);
  }
}

}  // namespace

void Server::start() {
  asio::co_spawn(workers_[0]->io(), accept_loop(acceptor_->acceptor, workers_), asio::detached);
  for (auto& worker : workers_) {
    threads_.emplace_back([w = worker.get()] { w->io().run(); });
  }
  state_.set_ready(true);
}

uint64_t Server::drain(std::chrono::milliseconds timeout) {
  state_.start_draining();
  asio::post(workers_[0]->io(), [this] {
    error_code ignored;
    acceptor_->acceptor.close(ignored);
  });
  for (auto& worker : workers_) {
    asio::post(worker->io(), [w = worker.get()] { w->close_idle(); });
  }
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
}

}  // namespace rolter
