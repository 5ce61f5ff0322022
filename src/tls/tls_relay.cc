#include "tls/tls_relay.h"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/write.hpp>

#include <array>
#include <variant>

namespace rolter {
namespace {

using namespace asio::experimental::awaitable_operators;

// A TLS record carries at most 16 KiB of plaintext: one read takes whole records, one write fills
// whole records.
constexpr size_t kChunk = 16 * 1024;

// What the two directions of one connection share. Both run on the worker's thread.
struct Relay {
  TlsStream& tls;
  PairSocket& pair;
  RelayLimits limits;
  bool session_done = false;  // the session stopped sending: nothing more goes either way
  bool client_lost = false;   // a write to the client failed or stalled
};

// Client → session. The client's end of stream, clean or not, becomes the pair's half-close.
Task<void> client_to_session(Relay& r) {
  std::array<char, kChunk> buffer;
  for (;;) {
    auto [ec, n] = co_await r.tls.async_read_some(asio::buffer(buffer), kNoThrow);
    if (r.session_done) co_return;
    if (n > 0) {
      auto [write_ec, written] =
          co_await asio::async_write(r.pair, asio::buffer(buffer.data(), n), kNoThrow);
      if (write_ec || r.session_done) co_return;  // the session reads no more
    }
    if (ec) break;
  }
  error_code ignored;
  r.pair.shutdown(asio::socket_base::shutdown_send, ignored);
}

// Session → client, each read written on at once. Ends when the session ends its side, or when
// the client cannot be written to; either way the other direction is stopped.
Task<void> session_to_client(Relay& r) {
  std::array<char, kChunk> buffer;
  asio::steady_timer stall(co_await asio::this_coro::executor);
  for (;;) {
    auto [ec, n] = co_await r.pair.async_read_some(asio::buffer(buffer), kNoThrow);
    if (ec) break;  // the session closed or shut down its sending side
    stall.expires_after(r.limits.write_stall);
    auto written = co_await (asio::async_write(r.tls, asio::buffer(buffer.data(), n), kNoThrow) ||
                             stall.async_wait(kNoThrow));
    if (written.index() != 0 || std::get<0>(std::get<0>(written))) {
      r.client_lost = true;
      break;
    }
  }
  r.session_done = true;
  error_code ignored;
  r.tls.next_layer().cancel(ignored);  // the pending read of the client
  r.pair.cancel(ignored);              // a write to the session that would never finish
  // The session's next write fails and its client watch sees the end: the client is gone.
  if (r.client_lost) r.pair.shutdown(asio::socket_base::shutdown_both, ignored);
}

// Sends close_notify and waits, briefly, for the client's: closing with the client's records
// unread would reset the connection, which can destroy the end of the response in flight.
Task<void> close_notify(TlsStream& tls, std::chrono::milliseconds wait) {
  asio::steady_timer timer(co_await asio::this_coro::executor, wait);
  co_await (tls.async_shutdown(kNoThrow) || timer.async_wait(kNoThrow));
}

}  // namespace

Task<error_code> handshake_within(TlsStream& tls, std::chrono::milliseconds limit) {
  asio::steady_timer timer(co_await asio::this_coro::executor, limit);
  auto done = co_await (tls.async_handshake(asio::ssl::stream_base::server, kNoThrow) ||
                        timer.async_wait(kNoThrow));
  if (done.index() != 0) co_return asio::error::timed_out;
  co_return std::get<0>(std::get<0>(done));
}

Task<void> relay_tls(TlsStream& tls, PairSocket& pair, RelayLimits limits) {
  Relay relay{.tls = tls, .pair = pair, .limits = limits};
  co_await (client_to_session(relay) && session_to_client(relay));
  if (!relay.client_lost) co_await close_notify(tls, limits.close_wait);
  error_code ignored;
  tls.next_layer().close(ignored);
  pair.close(ignored);
}

}  // namespace rolter
