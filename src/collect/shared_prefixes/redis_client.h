// BlockingRedisClient: one blocking connection to a Redis server (hiredis), for a background
// service's own thread. Commands are argument vectors, so binary values (prompts) need no
// escaping; several may be sent in one round trip. (The request path's client is asynchronous:
// limits/redis/redis_client.h.)
//
//   auto client = BlockingRedisClient::connect(address, password, timeout);
//   if (!client) ... client.error() says why ...
//   auto reply = client->command({"XADD", key, "*", "f", value});
//
// Every call returns the reply or an error message; after an error the connection is broken
// and the caller drops it.
//
// Thread-safety: none; one thread uses a client.
#pragma once

#include <tl/expected.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/url.h"

namespace rolter {

// A reply, as far as a stream reader needs: a string (status, bulk, integer as text), nil or an
// array.
struct BlockingRedisReply {
  enum class Kind { kNil, kString, kArray, kError };
  Kind kind = Kind::kNil;
  std::string text;
  std::vector<BlockingRedisReply> elements;
};

class BlockingRedisClient {
 public:
  using Args = std::vector<std::string_view>;

  // Connects (and sends AUTH and SELECT when asked). `timeout` bounds the connect and each
  // command's round trip.
  static tl::expected<std::unique_ptr<BlockingRedisClient>, std::string> connect(
      const RedisAddress& address, const std::string& password, std::chrono::milliseconds timeout);
  ~BlockingRedisClient();
  BlockingRedisClient(const BlockingRedisClient&) = delete;
  BlockingRedisClient& operator=(const BlockingRedisClient&) = delete;

  // One command; a Redis error reply is an error here too.
  tl::expected<BlockingRedisReply, std::string> command(const Args& args);
  // Several commands in one round trip; the error of the first that failed.
  tl::expected<void, std::string> pipeline(const std::vector<Args>& commands);

 private:
  struct Context;
  explicit BlockingRedisClient(std::unique_ptr<Context> context);
  std::unique_ptr<Context> context_;
};

}  // namespace rolter
