#include "upstream/upstream_connection.h"

#include <openssl/ssl.h>
#include <sys/socket.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/this_coro.hpp>

#include <cerrno>

namespace rolter {

bool UpstreamConnection::quiet() {
  // Decrypted bytes OpenSSL holds are bytes the upstream sent, just like those on the socket.
  if (auto* tls = std::get_if<Tls>(&stream);
      tls != nullptr && ::SSL_pending(tls->native_handle()) > 0) {
    return false;
  }
  auto& socket = tcp().socket();
  if (!socket.is_open()) return false;
  // Drained by the last read of its response, and no event since: nothing to look at. (What
  // arrived after the loop last polled is not seen, as in a loop that closes idle connections on
  // their read events.)
  if (!tcp().may_have_input()) return true;
  char byte;
  const ssize_t n = ::recv(socket.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

Task<std::pair<error_code, std::unique_ptr<UpstreamConnection>>> connect_upstream(
    const Endpoint& endpoint, uint32_t instance_id, ClientTls tls,
    std::chrono::milliseconds timeout) {
  auto executor = co_await asio::this_coro::executor;
  asio::ip::tcp::resolver resolver(executor);
  auto [resolve_ec, results] =
      co_await resolver.async_resolve(endpoint.host, endpoint.port, kNoThrow);
  if (resolve_ec) co_return std::pair{resolve_ec, nullptr};

  TimedStream tcp(executor);
  tcp.expires_after(timeout);
  auto [connect_ec, connected] = co_await tcp.async_connect(results, kNoThrow);
  if (connect_ec) co_return std::pair{connect_ec, nullptr};
  tcp.socket().set_option(asio::ip::tcp::no_delay(true));
  tcp.socket().non_blocking(true);  // requests are written at once when they fit (net/write_now.h)

  if (!endpoint.tls) {
    tcp.expires_never();
    co_return std::pair{error_code{},
                        std::make_unique<UpstreamConnection>(std::move(tcp), instance_id)};
  }

  UpstreamConnection::Tls stream(std::move(tcp), tls.get());
  if (!SSL_set_tlsext_host_name(stream.native_handle(), endpoint.host.c_str())) {
    co_return std::pair{
        error_code(static_cast<int>(::ERR_get_error()), asio::error::get_ssl_category()), nullptr};
  }
  stream.set_verify_callback(asio::ssl::host_name_verification(endpoint.host));
  auto [handshake_ec] = co_await stream.async_handshake(asio::ssl::stream_base::client, kNoThrow);
  if (handshake_ec) co_return std::pair{handshake_ec, nullptr};
  beast::get_lowest_layer(stream).expires_never();
  co_return std::pair{error_code{},
                      std::make_unique<UpstreamConnection>(std::move(stream), instance_id)};
}

}  // namespace rolter
