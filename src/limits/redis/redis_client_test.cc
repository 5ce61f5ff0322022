#include "limits/redis/redis_client.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <optional>

#include "limits/redis/testing/redis_server.h"

namespace rolter {
namespace {

using namespace std::chrono_literals;

// Runs `task` on `io` until it completes or `deadline` passes.
template <typename T>
std::optional<T> run_until_done(asio::io_context& io, Task<T> task,
                                std::chrono::milliseconds deadline = 10s) {
  std::optional<T> result;
  asio::co_spawn(io, std::move(task),
                 [&](std::exception_ptr, T value) { result = std::move(value); });
  const auto end = std::chrono::steady_clock::now() + deadline;
  while (!result && std::chrono::steady_clock::now() < end) io.run_for(5ms);
  return result;
}

bool wait_connected(asio::io_context& io, const RedisClient& client) {
  const auto end = std::chrono::steady_clock::now() + 10s;
  while (!client.connected() && std::chrono::steady_clock::now() < end) io.run_for(5ms);
  return client.connected();
}

class RedisClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new RedisServer;
    ASSERT_TRUE(server_->start()) << server_->error();
  }
  static void TearDownTestSuite() { delete server_; }

  RedisClientOptions options() const {
    RedisClientOptions o;
    o.port = server_->port();
    o.command_timeout = 500ms;  // these tests are about replies, not the deadline
    return o;
  }

  static RedisServer* server_;
  asio::io_context io_;
};
RedisServer* RedisClientTest::server_ = nullptr;

TEST_F(RedisClientTest, CommandsAreBinarySafe) {
  RedisClient client(io_.get_executor(), options());
  ASSERT_TRUE(wait_connected(io_, client));
  const std::string value("a\0b\r\nc", 6);
  const std::string_view set[] = {"SET", "client:binary", value};
  auto r = run_until_done(io_, client.command(set));
  ASSERT_TRUE(r && r->ok());
  const std::string_view get[] = {"GET", "client:binary"};
  r = run_until_done(io_, client.command(get));
  ASSERT_TRUE(r && r->ok());
  EXPECT_EQ(r->reply.str, value);
}

TEST_F(RedisClientTest, EvalFallsBackToEvalWhenTheScriptCacheIsFlushed) {
  const RedisScript script("return tonumber(ARGV[1]) + 1");
  RedisClient client(io_.get_executor(), options(), {&script});
  ASSERT_TRUE(wait_connected(io_, client));
  const std::string_view args[] = {"41"};
  auto r = run_until_done(io_, client.eval(script, {}, args));
  ASSERT_TRUE(r && r->ok()) << (r ? r->reply.str : "none");
  EXPECT_EQ(r->reply.integer, 42);
  server_->query({"SCRIPT", "FLUSH"});
  r = run_until_done(io_, client.eval(script, {}, args));
  ASSERT_TRUE(r && r->ok()) << (r ? r->reply.str : "none");
  EXPECT_EQ(r->reply.integer, 42);
}

TEST_F(RedisClientTest, CommandsFailAtOnceWhileDisconnected) {
  RedisClientOptions o = options();
  o.port = free_loopback_port();  // nobody listens there
  RedisClient client(io_.get_executor(), o);
  const std::string_view ping[] = {"PING"};
  const auto start = std::chrono::steady_clock::now();
  auto r = run_until_done(io_, client.command(ping));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, RedisStatus::kNotConnected);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
}

}  // namespace
}  // namespace rolter
