#include "server/tls_connection.h"

#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include <cerrno>
#include <chrono>
#include <string_view>

#include "observe/metrics.h"
#include "server/http_session.h"
#include "server/server_state.h"
#include "server/worker.h"
#include "tls/tls_relay.h"

namespace rolter {
namespace {

using std::chrono::milliseconds;

// Used only before the first snapshot has reached the worker.
constexpr milliseconds kDefaultHandshakeLimit{10000};
constexpr milliseconds kDefaultWriteStall{600000};

std::string_view pair_error_reason(int error) {
  switch (error) {
    case EMFILE:
      return "emfile";
    case ENFILE:
      return "enfile";
    default:
      return "other";
  }
}

// The two connected ends: the session's, as the TCP socket type it serves, and the relay's.
// False (with nothing left open) when the descriptors could not be had.
bool make_pair(Worker& worker, asio::ip::tcp::socket& session_end, PairSocket& relay_end) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    if (auto* metrics = worker.server().metrics) metrics->accept_error(pair_error_reason(errno));
    return false;
  }
  error_code ec;
  session_end.assign(asio::ip::tcp::v4(), fds[0], ec);
  if (ec) {
    ::close(fds[0]);
    ::close(fds[1]);
    return false;
  }
  relay_end.assign(asio::local::stream_protocol(), fds[1], ec);
  if (ec) {
    ::close(fds[1]);
    return false;  // session_end closes fds[0]
  }
  // As for an accepted socket: responses are written at once when they fit (net/write_now.h).
  session_end.non_blocking(true, ec);
  return !ec;
}

}  // namespace

Task<void> serve_tls_connection(Worker& worker, asio::ip::tcp::socket socket, Listener listener,
                                const TlsListener& listener_tls) {
  ClientPeer peer{.listener = listener, .ip = client_ip(socket), .tls = true};
  const auto& snapshot = worker.snapshot();
  const milliseconds handshake_limit =
      snapshot ? milliseconds(snapshot->config().server.header_timeout_ms) : kDefaultHandshakeLimit;
  // The session bounds a response to the client by upstream_timeout_ms; so does the relay.
  const milliseconds write_stall =
      snapshot ? milliseconds(snapshot->config().server.upstream_timeout_ms) : kDefaultWriteStall;

  TlsStream tls(std::move(socket), *listener_tls.context);
  if (const error_code ec = co_await handshake_within(tls, handshake_limit)) {
    const bool timed_out = ec == asio::error::timed_out;
    listener_tls.handshake_failures.count(timed_out);
    spdlog::debug("tls handshake with {} failed: {}", peer.ip, ec.message());
    error_code ignored;
    tls.next_layer().close(ignored);
    co_return;
  }
  asio::ip::tcp::socket session_end(worker.io());
  PairSocket relay_end(worker.io());
  if (!make_pair(worker, session_end, relay_end)) {
    error_code ignored;
    tls.next_layer().close(ignored);
    co_return;
  }
  asio::co_spawn(worker.io(),
                 serve_connection(worker, TimedStream(std::move(session_end)),
                                  std::move(peer)),
                 asio::detached);
  co_await relay_tls(tls, relay_end, RelayLimits{.write_stall = write_stall});
}

}  // namespace rolter
