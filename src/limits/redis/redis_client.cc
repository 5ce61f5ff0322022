#include "limits/redis/redis_client.h"

#include <hiredis/hiredis.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <deque>
#include <optional>
#include <variant>

namespace rolter {
namespace {

using SteadyClock = std::chrono::steady_clock;
using Tcp = asio::ip::tcp;
using Unix = asio::local::stream_protocol;
using TlsStream = asio::ssl::stream<Tcp::socket>;

// Bytes asked of each read: many pipelined replies at once.
constexpr size_t kReadChunk = 16 * 1024;

RedisReply copy_reply(const redisReply& r) {
  RedisReply out;
  switch (r.type) {
    case REDIS_REPLY_STRING:
      out.type = RedisReply::Type::kString;
      out.str.assign(r.str, r.len);
      break;
    case REDIS_REPLY_STATUS:
      out.type = RedisReply::Type::kStatus;
      out.str.assign(r.str, r.len);
      break;
    case REDIS_REPLY_ERROR:
      out.type = RedisReply::Type::kError;
      out.str.assign(r.str, r.len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = RedisReply::Type::kInteger;
      out.integer = r.integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = RedisReply::Type::kArray;
      out.elements.reserve(r.elements);
      for (size_t i = 0; i < r.elements; ++i) out.elements.push_back(copy_reply(*r.element[i]));
      break;
    default:
      break;
  }
  return out;
}

// One command on the wire, shared by the waiting coroutine and the connection's FIFO, so a reply
// that outlives its waiter lands safely.
struct Pending {
  explicit Pending(const asio::any_io_executor& executor) : timer(executor) {}
  asio::steady_timer timer;  // the waiter sleeps on it; the reply cancels it
  RedisReply reply;
  bool answered = false;   // a reply arrived, or the connection was lost
  bool replied = false;    // ... a reply
  bool abandoned = false;  // the waiter timed out and left
};

// One connection: the stream, the commands awaiting their replies (in order: Redis answers in
// command order), and the bytes waiting to be written. One read loop runs while it is open and
// one write loop while bytes are queued. hiredis only formats commands and parses replies.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  using Stream = std::variant<Tcp::socket, Unix::socket, TlsStream>;

  Connection(const asio::any_io_executor& executor, const RedisClientOptions& options,
             std::shared_ptr<asio::ssl::context> tls)
      : executor_(executor),
        tls_(std::move(tls)),
        stream_(make_stream(executor, options, tls_.get())),
        resolver_(executor),
        reader_(redisReaderCreate()),
        buffer_(kReadChunk) {}
  ~Connection() {
    if (reader_ != nullptr) redisReaderFree(reader_);
  }

  // TCP or Unix connect, then the TLS handshake. Returns "" or what failed.
  Task<std::string> open(const RedisClientOptions& options);
  // Queues one command; false when the connection is not open (nothing was queued).
  bool send(std::span<const std::string_view> args, std::shared_ptr<Pending> pending);
  // Closes the stream; every command still waiting completes as disconnected. Idempotent.
  void close();

  // When the oldest unanswered command was sent; nullopt when none is.
  std::optional<SteadyClock::time_point> oldest() const {
    if (in_flight_.empty()) return std::nullopt;
    return in_flight_.front().sent;
  }

  // Called once when the connection fails by itself (read or write error, protocol error).
  std::function<void(Connection*)> on_lost;
  bool expired = false;  // closed because the handshake outlived connect_timeout

 private:
  struct InFlight {
    std::shared_ptr<Pending> pending;
    SteadyClock::time_point sent;
  };

  static Stream make_stream(const asio::any_io_executor& executor,
                            const RedisClientOptions& options, asio::ssl::context* tls) {
    if (!options.unix_path.empty()) return Stream(std::in_place_type<Unix::socket>, executor);
    if (tls != nullptr) return Stream(std::in_place_type<TlsStream>, executor, *tls);
    return Stream(std::in_place_type<Tcp::socket>, executor);
  }

  Tcp::socket& tcp_socket() {
    if (auto* tls = std::get_if<TlsStream>(&stream_)) return tls->next_layer();
    return std::get<Tcp::socket>(stream_);
  }

  Task<std::string> connect_tcp(const RedisClientOptions& options);
  Task<std::string> handshake_tls(const RedisClientOptions& options);
  static Task<void> read_loop(std::shared_ptr<Connection> self);
  static Task<void> write_loop(std::shared_ptr<Connection> self);
  bool deliver();
  void lost();

  asio::any_io_executor executor_;
  std::shared_ptr<asio::ssl::context> tls_;  // outlives the stream that refers to it
  Stream stream_;
  Tcp::resolver resolver_;
  redisReader* reader_;
  std::vector<char> buffer_;
  std::deque<InFlight> in_flight_;
  std::string queued_;    // formatted commands not yet handed to the stream
  std::string outgoing_;  // the bytes of the write in progress
  bool writing_ = false;
  bool open_ = false;
  bool closed_ = false;
};

Task<std::string> Connection::open(const RedisClientOptions& options) {
  if (auto* socket = std::get_if<Unix::socket>(&stream_)) {
    auto [ec] = co_await socket->async_connect(Unix::endpoint(options.unix_path), kNoThrow);
    if (ec) co_return "connect to " + options.unix_path + ": " + ec.message();
  } else {
    std::string error = co_await connect_tcp(options);
    if (error.empty() && std::holds_alternative<TlsStream>(stream_)) {
      error = co_await handshake_tls(options);
    }
    if (!error.empty()) co_return error;
  }
  if (closed_) co_return "connection closed";
  open_ = true;
  asio::co_spawn(executor_, read_loop(shared_from_this()), asio::detached);
  co_return "";
}

Task<std::string> Connection::connect_tcp(const RedisClientOptions& options) {
  std::vector<Tcp::endpoint> endpoints;
  error_code ec;
  const auto address = asio::ip::make_address(options.host, ec);
  if (!ec) {
    endpoints.emplace_back(address, options.port);
  } else {
    auto [resolve_ec, results] =
        co_await resolver_.async_resolve(options.host, std::to_string(options.port), kNoThrow);
    if (resolve_ec) co_return "resolve " + options.host + ": " + resolve_ec.message();
    for (const auto& entry : results) endpoints.push_back(entry.endpoint());
  }
  auto [connect_ec, endpoint] = co_await asio::async_connect(tcp_socket(), endpoints, kNoThrow);
  if (connect_ec) co_return "connect: " + connect_ec.message();
  tcp_socket().set_option(Tcp::no_delay(true), ec);  // one small command must not wait for Nagle
  co_return "";
}

Task<std::string> Connection::handshake_tls(const RedisClientOptions& options) {
  auto& tls = std::get<TlsStream>(stream_);
  const std::string& name = options.server_name.empty() ? options.host : options.server_name;
  error_code ec;
  asio::ip::make_address(name, ec);
  // SNI carries names only, never an address.
  if (ec && SSL_set_tlsext_host_name(tls.native_handle(), name.c_str()) != 1) {
    co_return "TLS: cannot set the server name " + name;
  }
  auto [handshake_ec] = co_await tls.async_handshake(asio::ssl::stream_base::client, kNoThrow);
  if (!handshake_ec) co_return "";
  std::string error = "TLS handshake: " + handshake_ec.message();
  const long verify = SSL_get_verify_result(tls.native_handle());
  if (verify == X509_V_ERR_UNSPECIFIED) {  // what the host name check reports
    error += " (the certificate is not for " + name + ")";
  } else if (verify != X509_V_OK) {
    error += std::string(" (") + X509_verify_cert_error_string(verify) + " for " + name + ")";
  }
  co_return error;
}

bool Connection::send(std::span<const std::string_view> args, std::shared_ptr<Pending> pending) {
  if (!open_ || closed_) return false;
  std::vector<const char*> argv(args.size());
  std::vector<size_t> lengths(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    argv[i] = args[i].data();
    lengths[i] = args[i].size();
  }
  char* command = nullptr;
  const int length =
      redisFormatCommandArgv(&command, static_cast<int>(args.size()), argv.data(), lengths.data());
  if (length < 0 || command == nullptr) return false;
  queued_.append(command, static_cast<size_t>(length));
  redisFreeCommand(command);
  in_flight_.push_back({std::move(pending), SteadyClock::now()});
  if (!writing_) {
    writing_ = true;
    asio::co_spawn(executor_, write_loop(shared_from_this()), asio::detached);
  }
  return true;
}

Task<void> Connection::write_loop(std::shared_ptr<Connection> self) {
  while (!self->closed_ && !self->queued_.empty()) {
    self->outgoing_.clear();
    std::swap(self->outgoing_, self->queued_);
    auto [ec, written] = co_await std::visit(
        [&](auto& stream) {
          return asio::async_write(stream, asio::buffer(self->outgoing_), kNoThrow);
        },
        self->stream_);
    if (ec) {
      self->lost();
      break;
    }
  }
  self->writing_ = false;
}

Task<void> Connection::read_loop(std::shared_ptr<Connection> self) {
  while (!self->closed_) {
    auto [ec, n] = co_await std::visit(
        [&](auto& stream) { return stream.async_read_some(asio::buffer(self->buffer_), kNoThrow); },
        self->stream_);
    if (ec || self->closed_ ||
        redisReaderFeed(self->reader_, self->buffer_.data(), n) != REDIS_OK || !self->deliver()) {
      self->lost();
      co_return;
    }
  }
}

// Hands every complete reply to the oldest waiting command. False on a protocol error.
bool Connection::deliver() {
  for (;;) {
    void* raw = nullptr;
    if (redisReaderGetReply(reader_, &raw) != REDIS_OK) return false;
    if (raw == nullptr) return true;
    auto* reply = static_cast<redisReply*>(raw);
    if (in_flight_.empty()) {  // a reply nobody asked for: the stream is out of step
      freeReplyObject(reply);
      return false;
    }
    const std::shared_ptr<Pending> pending = std::move(in_flight_.front().pending);
    in_flight_.pop_front();
    if (!pending->abandoned) {
      pending->answered = true;
      pending->replied = true;
      pending->reply = copy_reply(*reply);
      pending->timer.cancel();
    }
    freeReplyObject(reply);
  }
}

void Connection::close() {
  if (closed_) return;
  closed_ = true;
  open_ = false;
  resolver_.cancel();
  error_code ec;
  if (auto* socket = std::get_if<Unix::socket>(&stream_)) {
    socket->close(ec);
  } else {
    tcp_socket().close(ec);  // no TLS close_notify: the peer is gone or being dropped
  }
  const std::deque<InFlight> failed = std::move(in_flight_);
  in_flight_.clear();
  for (const InFlight& entry : failed) {
    if (entry.pending->abandoned) continue;
    entry.pending->answered = true;
    entry.pending->timer.cancel();
  }
}

void Connection::lost() {
  if (closed_) return;
  close();
  if (on_lost) on_lost(this);
}

}  // namespace

RedisScript::RedisScript(std::string text) : body(std::move(text)) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(body.data(), body.size(), digest, &length, EVP_sha1(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  for (unsigned int i = 0; i < length; ++i) {
    sha1 += kHex[digest[i] >> 4];
    sha1 += kHex[digest[i] & 15];
  }
}

struct RedisClient::Impl : std::enable_shared_from_this<Impl> {
  Impl(asio::any_io_executor executor, RedisClientOptions opts,
       std::vector<const RedisScript*> loaded, Random& rng)
      : ex(std::move(executor)),
        options(std::move(opts)),
        scripts(std::move(loaded)),
        random(rng),
        wake(ex) {}

  ~Impl() { drop(); }

  asio::any_io_executor ex;
  RedisClientOptions options;
  std::vector<const RedisScript*> scripts;
  Random& random;
  std::shared_ptr<asio::ssl::context> tls;  // built at the first rediss connect
  std::shared_ptr<Connection> conn;         // null while disconnected
  bool ready = false;                       // connected and the handshake done
  bool stopped = false;
  uint64_t connects = 0;
  std::string last_error;   // the last connect failure logged, so a lasting one is logged once
  asio::steady_timer wake;  // the background loop's sleep, cancelled by a disconnect

  Task<RedisResult> send(std::span<const std::string_view> args,
                         std::chrono::steady_clock::duration timeout);
  Task<bool> connect_once();
  Task<std::string> handshake(SteadyClock::time_point deadline);
  Task<std::string> step(std::span<const std::string_view> args, SteadyClock::time_point deadline);
  std::shared_ptr<Connection> make_connection(std::string& error);
  static Task<void> run(std::shared_ptr<Impl> self);
  static Task<RedisResult> eval(std::shared_ptr<Impl> impl, const RedisScript& script,
                                std::span<const std::string_view> keys,
                                std::span<const std::string_view> args);
  void drop();
  void check_stall();
  void report(std::string error);
};

Task<RedisResult> RedisClient::Impl::send(std::span<const std::string_view> args,
                                          std::chrono::steady_clock::duration timeout) {
  RedisResult result;
  if (conn == nullptr || stopped) co_return result;
  auto pending = std::make_shared<Pending>(ex);
  if (!conn->send(args, pending)) co_return result;
  auto self = shared_from_this();  // check_stall() below needs this Impl
  pending->timer.expires_after(timeout);
  co_await pending->timer.async_wait(kNoThrow);
  if (pending->answered) {
    result.status = pending->replied ? RedisStatus::kOk : RedisStatus::kDisconnected;
    result.reply = std::move(pending->reply);
  } else {
    result.status = RedisStatus::kTimeout;
    pending->abandoned = true;
    check_stall();
  }
  co_return result;
}

// Frees the connection now: every command still waiting completes as kDisconnected.
void RedisClient::Impl::drop() {
  ready = false;
  if (conn != nullptr) {
    const std::shared_ptr<Connection> doomed = std::move(conn);
    doomed->on_lost = nullptr;
    doomed->close();
  }
  wake.cancel();
}

// A server that answers nothing for stall_timeout is hung: later commands would queue behind the
// silent ones and all time out, so the connection is dropped and the backoff retries it.
void RedisClient::Impl::check_stall() {
  if (conn == nullptr) return;
  const auto oldest = conn->oldest();
  if (oldest && SteadyClock::now() - *oldest >= options.stall_timeout) drop();
}

void RedisClient::Impl::report(std::string error) {
  if (error == last_error) return;
  const std::string where = !options.unix_path.empty()
                                ? "unix://" + options.unix_path
                                : (options.tls ? "rediss://" : "redis://") + options.host + ':' +
                                      std::to_string(options.port);
  spdlog::warn("redis {}: cannot connect: {}", where, error);
  last_error = std::move(error);
}

std::shared_ptr<Connection> RedisClient::Impl::make_connection(std::string& error) {
  if (options.tls && tls == nullptr) {
    auto context = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_client);
    error_code ec;
    context->set_default_verify_paths(ec);
    if (ec) {
      error = "TLS: cannot load the system CA store: " + ec.message();
      return nullptr;
    }
    if (!options.ca_file.empty()) context->load_verify_file(options.ca_file, ec);
    if (ec) {
      error = "TLS: cannot load the CA file " + options.ca_file + ": " + ec.message();
      return nullptr;
    }
    context->set_verify_mode(asio::ssl::verify_peer, ec);
    context->set_verify_callback(
        asio::ssl::host_name_verification(options.server_name.empty() ? options.host
                                                                      : options.server_name),
        ec);
    tls = std::move(context);
  }
  return std::make_shared<Connection>(ex, options, options.tls ? tls : nullptr);
}

Task<bool> RedisClient::Impl::connect_once() {
  const auto deadline = SteadyClock::now() + options.connect_timeout;
  std::string error;
  std::shared_ptr<Connection> fresh = make_connection(error);
  if (fresh == nullptr) {
    report(std::move(error));
    co_return false;
  }
  conn = fresh;
  fresh->on_lost = [this](Connection* lost) {
    if (conn.get() != lost) return;
    conn.reset();
    ready = false;
    wake.cancel();
  };
  // The whole handshake fits in connect_timeout: past it the watchdog closes the connection.
  auto watchdog = std::make_shared<asio::steady_timer>(ex, deadline);
  watchdog->async_wait([fresh, watchdog](error_code ec) {
    if (ec) return;
    fresh->expired = true;
    fresh->close();
  });
  error = co_await fresh->open(options);
  if (error.empty()) error = co_await handshake(deadline);
  watchdog->cancel();
  if (stopped) co_return false;
  if (error.empty() && conn != fresh) error = "connection lost";
  if (!error.empty()) {
    if (conn == fresh) drop();
    if (fresh->expired) error = "no answer within connect_timeout (" + error + ")";
    report(std::move(error));
    co_return false;
  }
  ready = true;
  ++connects;
  last_error.clear();
  co_return true;
}

// AUTH, SELECT, SCRIPT LOAD, PING in turn. Returns "" or what failed.
Task<std::string> RedisClient::Impl::handshake(SteadyClock::time_point deadline) {
  std::string error;
  if (!options.password.empty()) {
    const std::string_view auth[] = {"AUTH", options.password};
    error = co_await step(auth, deadline);
  }
  const std::string db = std::to_string(options.db);
  if (error.empty() && options.db != 0) {
    const std::string_view select[] = {"SELECT", db};
    error = co_await step(select, deadline);
  }
  for (const RedisScript* script : scripts) {
    if (!error.empty()) break;
    const std::string_view load[] = {"SCRIPT", "LOAD", script->body};
    error = co_await step(load, deadline);
  }
  if (error.empty()) {
    // Ready only once the server has answered.
    const std::string_view ping[] = {"PING"};
    error = co_await step(ping, deadline);
  }
  co_return error;
}

Task<std::string> RedisClient::Impl::step(std::span<const std::string_view> args,
                                          SteadyClock::time_point deadline) {
  const std::string name(args[0]);
  const auto left = deadline - SteadyClock::now();
  if (left <= SteadyClock::duration::zero()) co_return name + ": no time left";
  const RedisResult r = co_await send(args, left);
  switch (r.status) {
    case RedisStatus::kOk:
      co_return r.reply.is_error() ? name + ": " + r.reply.str : std::string();
    case RedisStatus::kTimeout:
      co_return name + ": no answer";
    default:
      co_return name + ": connection lost";
  }
}

Task<void> RedisClient::Impl::run(std::shared_ptr<Impl> self) {
  auto backoff = self->options.backoff_min;
  while (!self->stopped) {
    if (co_await self->connect_once()) {
      backoff = self->options.backoff_min;
      while (self->ready && !self->stopped) {
        self->wake.expires_at(SteadyClock::time_point::max());
        co_await self->wake.async_wait(kNoThrow);
      }
      if (self->stopped) break;
    }
    // Jitter in [backoff/2, backoff): nodes that lost the same Redis do not return in step.
    const auto half = backoff / 2;
    const auto jitter = std::chrono::milliseconds(
        self->random.uniform(static_cast<size_t>(std::max<int64_t>(1, half.count()))));
    self->wake.expires_after(half + jitter);
    co_await self->wake.async_wait(kNoThrow);
    backoff = std::min(backoff * 2, self->options.backoff_max);
  }
}

RedisClient::RedisClient(asio::any_io_executor executor, RedisClientOptions options,
                         std::vector<const RedisScript*> scripts, Random& random)
    : impl_(std::make_shared<Impl>(std::move(executor), std::move(options), std::move(scripts),
                                   random)) {
  asio::co_spawn(impl_->ex, Impl::run(impl_), asio::detached);
}

RedisClient::~RedisClient() {
  impl_->stopped = true;
  impl_->drop();
}

bool RedisClient::connected() const { return impl_->ready; }
uint64_t RedisClient::connects() const { return impl_->connects; }

Task<RedisResult> RedisClient::command(std::span<const std::string_view> args) {
  auto impl = impl_;
  if (!impl->ready) co_return RedisResult{};
  co_return co_await impl->send(args, impl->options.command_timeout);
}

Task<RedisResult> RedisClient::eval(const RedisScript& script,
                                    std::span<const std::string_view> keys,
                                    std::span<const std::string_view> args) {
  return Impl::eval(impl_, script, keys, args);
}

Task<RedisResult> RedisClient::Impl::eval(std::shared_ptr<Impl> impl, const RedisScript& script,
                                          std::span<const std::string_view> keys,
                                          std::span<const std::string_view> args) {
  if (!impl->ready) co_return RedisResult{};
  const auto deadline = SteadyClock::now() + impl->options.command_timeout;
  const std::string key_count = std::to_string(keys.size());
  std::vector<std::string_view> argv;
  argv.reserve(3 + keys.size() + args.size());
  argv.push_back("EVALSHA");
  argv.push_back(script.sha1);
  argv.push_back(key_count);
  argv.insert(argv.end(), keys.begin(), keys.end());
  argv.insert(argv.end(), args.begin(), args.end());
  RedisResult result = co_await impl->send(argv, deadline - SteadyClock::now());
  if (result.status == RedisStatus::kOk && result.reply.is_error() &&
      result.reply.str.starts_with("NOSCRIPT")) {
    // The server lost its script cache (a restart, SCRIPT FLUSH): EVAL caches it again.
    const auto left = deadline - SteadyClock::now();
    if (left <= SteadyClock::duration::zero()) co_return RedisResult{RedisStatus::kTimeout, {}};
    argv[0] = "EVAL";
    argv[1] = script.body;
    result = co_await impl->send(argv, left);
  }
  co_return result;
}

namespace {

Task<void> eval_in_background(std::shared_ptr<RedisClient::Impl> impl, const RedisScript& script,
                              std::vector<std::string> keys, std::vector<std::string> args,
                              std::function<void(const RedisResult&)> done) {
  std::vector<std::string_view> key_views(keys.begin(), keys.end());
  std::vector<std::string_view> arg_views(args.begin(), args.end());
  RedisResult result = co_await RedisClient::Impl::eval(impl, script, key_views, arg_views);
  if (done) done(result);
}

}  // namespace

void RedisClient::eval_detached(const RedisScript& script, std::vector<std::string> keys,
                                std::vector<std::string> args,
                                std::function<void(const RedisResult&)> done) {
  asio::co_spawn(
      impl_->ex,
      eval_in_background(impl_, script, std::move(keys), std::move(args), std::move(done)),
      asio::detached);
}

}  // namespace rolter
