// RedisClient: one asynchronous Redis connection driven by a worker's io_context.
//
//   RedisClient client(io.get_executor(), options);     // starts connecting in the background
//   RedisScript script(lua_text);                       // its SHA1 is computed here
//   RedisResult r = co_await client.eval(script, keys, args);
//   if (r.status == RedisStatus::kOk && !r.reply.is_error()) ... r.reply ...
//
// No call ever blocks the thread and the client has no thread of its own: Asio does all the I/O
// (TCP, a Unix socket, or TLS for rediss://) and hiredis only encodes commands and decodes
// replies. Commands are pipelined: replies come in command order and are matched to a FIFO.
// Every command completes within the command timeout: after it the caller gets kTimeout at once,
// and a reply that arrives later is dropped. While the connection is down, commands fail at once
// with kNotConnected (nothing is queued); the client reconnects in the background with jittered
// exponential backoff (50 ms doubling to 5 s by default). A server that keeps every command
// unanswered for `stall_timeout` is dropped too, so a hung Redis costs each command at most its
// timeout and is retried like a dead one.
//
// At each connect the client sends AUTH (when a password is given), SELECT (db != 0), SCRIPT LOAD
// of every registered script and PING, and is ready once all have answered; eval() uses EVALSHA
// and falls back to EVAL on NOSCRIPT.
//
// Thread-safety: not thread-safe. A client belongs to the io_context of its executor, which must
// run on one thread; construct, call and destroy it on that thread (or while the io_context is not
// running). Commands still in flight when the client is destroyed complete with kNotConnected.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/random.h"
#include "net/asio_fwd.h"

namespace rolter {

struct RedisClientOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 6379;
  std::string unix_path;  // when set, connect to this socket instead of host:port
  // TLS (rediss://): the server's certificate is verified against the system CA store plus
  // `ca_file` (a PEM bundle, for a private CA) and must name `server_name` (default: host), which
  // is also sent as SNI. A failed TLS handshake fails the connect like any other.
  bool tls = false;
  std::string ca_file;
  std::string server_name;
  int db = 0;
  std::string password;  // "" = no AUTH
  std::chrono::milliseconds command_timeout{20};
  // The whole handshake: TCP connect, TLS handshake, AUTH, SELECT, SCRIPT LOAD, PING.
  std::chrono::milliseconds connect_timeout{1000};
  // The oldest command unanswered this long means the server is hung: drop and reconnect.
  std::chrono::milliseconds stall_timeout{1000};
  std::chrono::milliseconds backoff_min{50};
  std::chrono::milliseconds backoff_max{5000};
};

// A reply, copied out of hiredis's reader.
struct RedisReply {
  enum class Type : uint8_t { kNil, kStatus, kError, kInteger, kString, kArray };
  Type type = Type::kNil;
  int64_t integer = 0;
  std::string str;  // kStatus, kError, kString
  std::vector<RedisReply> elements;

  bool is_error() const { return type == Type::kError; }
};

enum class RedisStatus : uint8_t {
  kOk,            // a reply arrived (it may be an error reply)
  kNotConnected,  // no connection now: nothing was sent
  kTimeout,       // no reply within the command timeout
  kDisconnected,  // the connection was lost before the reply
};

struct RedisResult {
  RedisStatus status = RedisStatus::kNotConnected;
  RedisReply reply;

  bool ok() const { return status == RedisStatus::kOk && !reply.is_error(); }
};

// A Lua script with its SHA1, for EVALSHA.
struct RedisScript {
  explicit RedisScript(std::string body);
  std::string body;
  std::string sha1;  // 40 lowercase hex digits
};

class RedisClient {
 public:
  // `scripts` are SCRIPT LOADed at each connect and must outlive the client; `random` draws the
  // backoff's jitter and must outlive it too.
  RedisClient(asio::any_io_executor executor, RedisClientOptions options,
              std::vector<const RedisScript*> scripts = {}, Random& random = default_random());
  ~RedisClient();
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  // One command; the arguments are binary-safe and need live only until the first suspension.
  Task<RedisResult> command(std::span<const std::string_view> args);

  // EVALSHA of `script` (EVAL when the server lost it). REQUIRES: keys and args live until the
  // awaitable completes.
  Task<RedisResult> eval(const RedisScript& script, std::span<const std::string_view> keys,
                         std::span<const std::string_view> args);

  // eval() without a waiter: `done` (may be empty) gets the result on this client's thread.
  void eval_detached(const RedisScript& script, std::vector<std::string> keys,
                     std::vector<std::string> args, std::function<void(const RedisResult&)> done);

  bool connected() const;
  // Successful handshakes so far (1 after the first connect).
  uint64_t connects() const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace rolter
