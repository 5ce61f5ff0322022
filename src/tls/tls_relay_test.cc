#include "tls/tls_relay.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/write.hpp>

#include <cstdio>
#include <string>

#include "tls/server_context.h"
#include "tls/testing/self_signed.h"

namespace rolter {
namespace {

using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

// A TLS listener on loopback whose connections are relayed to a socket pair; `session` plays the
// plaintext session on the pair's other end.
class RelayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto s = tls_testing::SelfSigned::make();
    // CTest runs each case as a process of its own, several at once: each writes its own files.
    const std::string base = ::testing::TempDir() + "rolter_relay_" + std::to_string(::getpid());
    cert_path_ = base + ".pem";
    key_path_ = base + ".key";
    ASSERT_TRUE(tls_testing::write_text(cert_path_, tls_testing::cert_pem(s)));
    ASSERT_TRUE(tls_testing::write_text(key_path_, tls_testing::key_pem(s)));
    auto context = make_server_context(cert_path_, key_path_);
    ASSERT_TRUE(context) << context.error();
    server_context_ = std::move(*context);
    acceptor_.open(tcp::v4());
    acceptor_.bind({asio::ip::make_address("127.0.0.1"), 0});
    acceptor_.listen();
  }

  void TearDown() override {
    std::remove(cert_path_.c_str());
    std::remove(key_path_.c_str());
  }

  // Accepts one connection, shakes hands and relays it; the session runs on the pair's end.
  template <typename Session>
  Task<void> serve_one(Session session) {
    auto [ec, socket] = co_await acceptor_.async_accept(kNoThrow);
    if (ec) co_return;
    TlsStream tls(std::move(socket), *server_context_);
    if (co_await handshake_within(tls, 5s)) co_return;
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) co_return;
    PairSocket relay_end(io_, asio::local::stream_protocol(), fds[0]);
    auto session_end =
        std::make_unique<PairSocket>(io_, asio::local::stream_protocol(), fds[1]);
    asio::co_spawn(io_, session(std::move(session_end)), asio::detached);
    co_await relay_tls(tls, relay_end, RelayLimits{.write_stall = 5s, .close_wait = 1s});
    relayed_ = true;
  }

  // Connects a TLS client (it trusts anything: the relay, not verification, is under test).
  template <typename Client>
  Task<void> with_client(Client client_fn) {
    auto client = std::make_unique<TlsStream>(io_, client_context_);
    auto [ec] = co_await client->next_layer().async_connect(acceptor_.local_endpoint(), kNoThrow);
    EXPECT_FALSE(ec) << ec.message();
    auto [handshake_ec] =
        co_await client->async_handshake(asio::ssl::stream_base::client, kNoThrow);
    EXPECT_FALSE(handshake_ec) << handshake_ec.message();
    co_await client_fn(std::move(client));
  }

  Task<void> handshake_one(error_code* out, std::chrono::milliseconds limit) {
    auto [ec, socket] = co_await acceptor_.async_accept(kNoThrow);
    TlsStream tls(std::move(socket), *server_context_);
    *out = co_await handshake_within(tls, limit);
  }

  void run() {
    io_.run_for(10s);
    EXPECT_TRUE(io_.stopped()) << "the exchange did not finish";
  }

  asio::io_context io_;
  tcp::acceptor acceptor_{io_};
  std::unique_ptr<asio::ssl::context> server_context_;
  std::string cert_path_;
  std::string key_path_;
  asio::ssl::context client_context_{asio::ssl::context::tls_client};
  bool relayed_ = false;
};

// The plaintext session's side of RelaysAtOnceAndCarriesTheClientsHalfClose: writes first, reads
// the whole request up to the half-close, answers, closes.
Task<void> answering_session(std::unique_ptr<PairSocket> end, std::string* read) {
  co_await asio::async_write(*end, asio::buffer(std::string_view("one")), kNoThrow);
  std::string data;
  auto [ec, n] = co_await asio::async_read(*end, asio::dynamic_buffer(data), kNoThrow);
  *read = ec == asio::error::eof ? data : "error: " + ec.message();
  co_await asio::async_write(*end, asio::buffer(std::string_view("bye")), kNoThrow);
  end->close();
}

Task<void> half_closing_client(std::unique_ptr<TlsStream> client, std::string* read) {
  std::array<char, 3> first;
  auto [ec, n] = co_await asio::async_read(*client, asio::buffer(first), kNoThrow);
  EXPECT_EQ(std::string_view(first.data(), n), "one");  // before the client sent anything
  co_await asio::async_write(*client, asio::buffer(std::string_view("hello")), kNoThrow);
  error_code ignored;
  client->next_layer().shutdown(tcp::socket::shutdown_send, ignored);  // a bare TCP half-close
  std::string rest;
  auto [read_ec, m] = co_await asio::async_read(*client, asio::dynamic_buffer(rest), kNoThrow);
  *read = rest;
  EXPECT_EQ(read_ec, asio::error::eof) << "a close_notify ends the answer: " << read_ec.message();
}

// Bytes pass at once both ways (nothing waits for more); the client's end of stream reaches the
// session as a half-close, the session still answers, and its close ends the client's stream.
TEST_F(RelayTest, RelaysAtOnceAndCarriesTheClientsHalfClose) {
  std::string session_read;
  std::string client_read;
  asio::co_spawn(io_, serve_one([&](std::unique_ptr<PairSocket> end) {
    return answering_session(std::move(end), &session_read);
  }), asio::detached);
  asio::co_spawn(io_, with_client([&](std::unique_ptr<TlsStream> client) {
    return half_closing_client(std::move(client), &client_read);
  }), asio::detached);
  run();
  EXPECT_EQ(session_read, "hello");
  EXPECT_EQ(client_read, "bye");
  EXPECT_TRUE(relayed_);
}

// A session streaming a response, until a write fails.
Task<void> streaming_session(std::unique_ptr<PairSocket> end, error_code* error) {
  asio::steady_timer pause(co_await asio::this_coro::executor);
  const std::string chunk(1024, 'x');
  for (int i = 0; i < 500 && !*error; ++i) {
    auto [ec, n] = co_await asio::async_write(*end, asio::buffer(chunk), kNoThrow);
    *error = ec;
    pause.expires_after(5ms);
    co_await pause.async_wait(kNoThrow);
  }
}

Task<void> leaving_client(std::unique_ptr<TlsStream> client) {
  std::array<char, 1024> some;
  co_await client->async_read_some(asio::buffer(some), kNoThrow);
  client->next_layer().close();
}

// A client that is gone makes the session's writes fail, as a plaintext socket's would.
TEST_F(RelayTest, AClientThatLeavesFailsTheSessionsWrites) {
  error_code session_error;
  asio::co_spawn(io_, serve_one([&](std::unique_ptr<PairSocket> end) {
    return streaming_session(std::move(end), &session_error);
  }), asio::detached);
  asio::co_spawn(io_, with_client(leaving_client), asio::detached);
  run();
  EXPECT_TRUE(session_error == asio::error::broken_pipe ||
              session_error == asio::error::connection_reset)
      << session_error.message();
  EXPECT_TRUE(relayed_);
}

Task<void> plain_http_client(tcp::socket& plain, tcp::endpoint server) {
  co_await plain.async_connect(server, kNoThrow);
  co_await asio::async_write(plain, asio::buffer(std::string_view("GET / HTTP/1.1\r\n\r\n")),
                             kNoThrow);
  std::array<char, 64> sink;
  co_await plain.async_read_some(asio::buffer(sink), kNoThrow);
}

// Whatever is not a TLS client hello fails the handshake at once.
TEST_F(RelayTest, PlainHttpFailsTheHandshake) {
  error_code handshake_error;
  tcp::socket plain(io_);
  asio::co_spawn(io_, handshake_one(&handshake_error, 5s), asio::detached);
  asio::co_spawn(io_, plain_http_client(plain, acceptor_.local_endpoint()), asio::detached);
  run();
  EXPECT_TRUE(handshake_error);
  EXPECT_NE(handshake_error, asio::error::timed_out);
}

TEST_F(RelayTest, ASilentClientTimesOut) {
  error_code handshake_error;
  tcp::socket silent(io_);
  silent.connect(acceptor_.local_endpoint());
  asio::co_spawn(io_, handshake_one(&handshake_error, 50ms), asio::detached);
  run();
  EXPECT_EQ(handshake_error, asio::error::timed_out);
}

}  // namespace
}  // namespace rolter
