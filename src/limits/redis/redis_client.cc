#include "limits/redis/redis_client.h"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <openssl/evp.h>
#include <poll.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <deque>

namespace rolter {
namespace {

using SteadyClock = std::chrono::steady_clock;

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

// One command on the wire. Two owners: hiredis's callback and the waiting coroutine; whichever
// lets go last frees it, so a reply that outlives its waiter lands safely.
struct Pending {
  explicit Pending(const asio::any_io_executor& executor) : timer(executor) {}
  asio::steady_timer timer;  // the waiter sleeps on it; the reply cancels it
  RedisReply reply;
  bool answered = false;   // hiredis ran the callback
  bool replied = false;    // ... with a reply (not the flush of a lost connection)
  bool abandoned = false;  // the waiter timed out and left
  int refs = 2;
};

void release(Pending* pending) {
  if (--pending->refs == 0) delete pending;
}

// Watch: hiredis's event hooks, served by an Asio descriptor on the client's io_context.
//
// hiredis expects level-triggered readiness, Asio's reactor is edge-triggered: a wait started
// after the edge would sleep forever. So before each wait the socket is polled (poll(2), zero
// timeout) and, when already ready, the handler is posted instead. The descriptor never owns the
// fd: hiredis closes it after the cleanup hook has released it from Asio.
class Watch : public std::enable_shared_from_this<Watch> {
 public:
  Watch(const asio::any_io_executor& executor, redisAsyncContext* context)
      : descriptor_(executor), context_(context) {}

  bool attach() {
    error_code ec;
    descriptor_.assign(context_->c.fd, ec);
    if (ec) return false;
    self_ = shared_from_this();
    context_->ev.data = this;
    context_->ev.addRead = [](void* w) { static_cast<Watch*>(w)->want(kRead, true); };
    context_->ev.delRead = [](void* w) { static_cast<Watch*>(w)->want(kRead, false); };
    context_->ev.addWrite = [](void* w) { static_cast<Watch*>(w)->want(kWrite, true); };
    context_->ev.delWrite = [](void* w) { static_cast<Watch*>(w)->want(kWrite, false); };
    context_->ev.cleanup = [](void* w) { static_cast<Watch*>(w)->detach(); };
    return true;
  }

 private:
  static constexpr int kRead = 0;
  static constexpr int kWrite = 1;

  void want(int direction, bool on) {
    wanted_[direction] = on;
    if (on) arm(direction);
  }

  void arm(int direction) {
    if (armed_[direction] || context_ == nullptr) return;
    armed_[direction] = true;
    pollfd probe{context_->c.fd, static_cast<short>(direction == kRead ? POLLIN : POLLOUT), 0};
    if (::poll(&probe, 1, 0) > 0) {
      asio::post(descriptor_.get_executor(),
                 [self = shared_from_this(), direction] { self->ready(direction); });
      return;
    }
    descriptor_.async_wait(direction == kRead ? asio::posix::descriptor_base::wait_read
                                              : asio::posix::descriptor_base::wait_write,
                           [self = shared_from_this(), direction](error_code) {
                             self->ready(direction);
                           });
  }

  void ready(int direction) {
    armed_[direction] = false;
    if (context_ == nullptr || !wanted_[direction]) return;
    // Either call may free the context; the cleanup hook then clears context_.
    if (direction == kRead) {
      redisAsyncHandleRead(context_);
    } else {
      redisAsyncHandleWrite(context_);
    }
    if (context_ != nullptr && wanted_[direction]) arm(direction);
  }

  // hiredis is about to close the fd and free the context.
  void detach() {
    context_ = nullptr;
    descriptor_.release();  // cancels the waits; their handlers find context_ null
    auto last = std::move(self_);
  }

  asio::posix::stream_descriptor descriptor_;
  redisAsyncContext* context_;
  bool wanted_[2] = {false, false};
  bool armed_[2] = {false, false};
  std::shared_ptr<Watch> self_;  // hiredis's reference, dropped by the cleanup hook
};

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
  redisAsyncContext* context = nullptr;  // null while disconnected
  bool ready = false;                    // connected and the handshake done
  bool stopped = false;
  uint64_t connects = 0;
  asio::steady_timer wake;  // the background loop's sleep, cancelled by a disconnect
  // When each command still awaiting its reply was sent, oldest first (replies come in order).
  std::deque<SteadyClock::time_point> sent;

  Task<RedisResult> send(std::span<const std::string_view> args,
                         std::chrono::steady_clock::duration timeout);
  Task<bool> connect_once();
  static Task<void> run(std::shared_ptr<Impl> self);
  static Task<RedisResult> eval(std::shared_ptr<Impl> impl, const RedisScript& script,
                                std::span<const std::string_view> keys,
                                std::span<const std::string_view> args);
  void drop();
  void check_stall();

  static void on_reply(redisAsyncContext* context, void* reply, void* privdata);
  static void on_connect(const redisAsyncContext* context, int status);
  static void on_disconnect(const redisAsyncContext* context, int status);
};

Task<RedisResult> RedisClient::Impl::send(std::span<const std::string_view> args,
                                          std::chrono::steady_clock::duration timeout) {
  RedisResult result;
  if (context == nullptr || stopped) co_return result;
  std::vector<const char*> argv(args.size());
  std::vector<size_t> lengths(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    argv[i] = args[i].data();
    lengths[i] = args[i].size();
  }
  auto* pending = new Pending(ex);
  if (redisAsyncCommandArgv(context, &on_reply, pending, static_cast<int>(args.size()),
                            argv.data(), lengths.data()) != REDIS_OK) {
    delete pending;
    co_return result;
  }
  sent.push_back(SteadyClock::now());
  auto self = shared_from_this();  // the reply callback reaches this Impl through the context
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
  release(pending);
  co_return result;
}

void RedisClient::Impl::on_reply(redisAsyncContext* context, void* reply, void* privdata) {
  auto* impl = static_cast<Impl*>(context->data);
  if (impl != nullptr && !impl->sent.empty()) impl->sent.pop_front();
  auto* pending = static_cast<Pending*>(privdata);
  if (!pending->abandoned) {
    pending->answered = true;
    if (reply != nullptr) {
      pending->replied = true;
      pending->reply = copy_reply(*static_cast<redisReply*>(reply));
    }
    pending->timer.cancel();
  }
  release(pending);
}

void RedisClient::Impl::on_connect(const redisAsyncContext* context, int status) {
  // On failure hiredis frees the context right after this call; the handshake's commands are
  // flushed with no reply, which is how connect_once() learns of it.
  auto* impl = static_cast<Impl*>(context->data);
  if (status != REDIS_OK && impl != nullptr && impl->context == context) impl->context = nullptr;
}

void RedisClient::Impl::on_disconnect(const redisAsyncContext* context, int status) {
  auto* impl = static_cast<Impl*>(context->data);
  if (impl == nullptr) return;
  if (impl->context == context) impl->context = nullptr;
  impl->ready = false;
  impl->sent.clear();
  impl->wake.cancel();
}

// Frees the connection now: every command still waiting completes as kDisconnected.
// Never called from inside a hiredis callback.
void RedisClient::Impl::drop() {
  ready = false;
  if (context != nullptr) {
    redisAsyncContext* doomed = context;
    context = nullptr;
    redisAsyncFree(doomed);
  }
  sent.clear();
  wake.cancel();
}

// A server that answers nothing for stall_timeout is hung: later commands would queue behind the
// silent ones and all time out, so the connection is dropped and the backoff retries it.
void RedisClient::Impl::check_stall() {
  if (context != nullptr && !sent.empty() &&
      SteadyClock::now() - sent.front() >= options.stall_timeout) {
    drop();
  }
}

Task<bool> RedisClient::Impl::connect_once() {
  const auto deadline = SteadyClock::now() + options.connect_timeout;
  std::string host = options.host;
  if (options.unix_path.empty()) {
    // hiredis would resolve a name with a blocking getaddrinfo(); hand it an address.
    error_code ec;
    asio::ip::make_address(host, ec);
    if (ec) {
      asio::ip::tcp::resolver resolver(ex);
      auto [resolve_ec, results] =
          co_await resolver.async_resolve(host, std::to_string(options.port), kNoThrow);
      if (resolve_ec || results.empty() || stopped) co_return false;
      host = results.begin()->endpoint().address().to_string();
    }
  }
  redisAsyncContext* fresh = options.unix_path.empty()
                                 ? redisAsyncConnect(host.c_str(), options.port)
                                 : redisAsyncConnectUnix(options.unix_path.c_str());
  if (fresh == nullptr) co_return false;
  if (fresh->err != 0 || !std::make_shared<Watch>(ex, fresh)->attach()) {
    redisAsyncFree(fresh);
    co_return false;
  }
  fresh->data = this;
  context = fresh;
  redisAsyncSetDisconnectCallback(fresh, &on_disconnect);
  // Arms the write watch: the connect completes on the first writable event.
  redisAsyncSetConnectCallback(fresh, &on_connect);

  // The handshake, queued at once; hiredis writes it when the socket connects.
  auto step = [&](std::span<const std::string_view> args) -> Task<bool> {
    const auto left = deadline - SteadyClock::now();
    if (context == nullptr || left <= SteadyClock::duration::zero()) co_return false;
    RedisResult r = co_await send(args, left);
    co_return r.ok();
  };
  bool ok = true;
  if (!options.password.empty()) {
    const std::string_view auth[] = {"AUTH", options.password};
    ok = co_await step(auth);
  }
  const std::string db = std::to_string(options.db);
  if (ok && options.db != 0) {
    const std::string_view select[] = {"SELECT", db};
    ok = co_await step(select);
  }
  for (const RedisScript* script : scripts) {
    if (!ok) break;
    const std::string_view load[] = {"SCRIPT", "LOAD", script->body};
    ok = co_await step(load);
  }
  if (ok) {
    // Ready only once the server has answered: without a password or scripts, this is the first
    // command, and the one that proves the TCP connect succeeded.
    const std::string_view ping[] = {"PING"};
    ok = co_await step(ping);
  }
  if (!ok || stopped || context != fresh) {
    if (context == fresh) drop();
    co_return false;
  }
  ready = true;
  ++connects;
  co_return true;
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
  asio::co_spawn(impl_->ex,
                 eval_in_background(impl_, script, std::move(keys), std::move(args),
                                    std::move(done)),
                 asio::detached);
}

}  // namespace rolter
