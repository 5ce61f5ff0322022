#include "collect/shared_prefixes/redis_client.h"

#include <hiredis/hiredis.h>

#include <sys/time.h>

namespace rolter {
namespace {

timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

BlockingRedisReply convert(const redisReply* r) {
  BlockingRedisReply out;
  switch (r->type) {
    case REDIS_REPLY_NIL:
      out.kind = BlockingRedisReply::Kind::kNil;
      break;
    case REDIS_REPLY_ARRAY:
      out.kind = BlockingRedisReply::Kind::kArray;
      out.elements.reserve(r->elements);
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(convert(r->element[i]));
      break;
    case REDIS_REPLY_INTEGER:
      out.kind = BlockingRedisReply::Kind::kString;
      out.text = std::to_string(r->integer);
      break;
    case REDIS_REPLY_ERROR:
      out.kind = BlockingRedisReply::Kind::kError;
      out.text.assign(r->str, r->len);
      break;
    default:
      out.kind = BlockingRedisReply::Kind::kString;
      if (r->str != nullptr) out.text.assign(r->str, r->len);
      break;
  }
  return out;
}

struct ReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

}  // namespace

struct BlockingRedisClient::Context {
  redisContext* c = nullptr;
  ~Context() {
    if (c != nullptr) redisFree(c);
  }
  std::string error() const {
    return c == nullptr ? "out of memory" : std::string(c->errstr[0] ? c->errstr : "I/O error");
  }
  void append(const Args& args) {
    std::vector<const char*> argv;
    std::vector<size_t> lengths;
    argv.reserve(args.size());
    lengths.reserve(args.size());
    for (std::string_view a : args) {
      argv.push_back(a.data());
      lengths.push_back(a.size());
    }
    redisAppendCommandArgv(c, static_cast<int>(args.size()), argv.data(), lengths.data());
  }
  tl::expected<BlockingRedisReply, std::string> read() {
    void* raw = nullptr;
    if (redisGetReply(c, &raw) != REDIS_OK || raw == nullptr) return tl::unexpected(error());
    ReplyPtr reply(static_cast<redisReply*>(raw));
    BlockingRedisReply out = convert(reply.get());
    if (out.kind == BlockingRedisReply::Kind::kError) return tl::unexpected("redis: " + out.text);
    return out;
  }
};

BlockingRedisClient::BlockingRedisClient(std::unique_ptr<Context> context)
    : context_(std::move(context)) {}
BlockingRedisClient::~BlockingRedisClient() = default;

tl::expected<std::unique_ptr<BlockingRedisClient>, std::string> BlockingRedisClient::connect(
    const RedisAddress& address, const std::string& password, std::chrono::milliseconds timeout) {
  auto context = std::make_unique<Context>();
  const timeval tv = to_timeval(timeout);
  context->c = address.socket_path.empty()
                   ? redisConnectWithTimeout(address.host.c_str(), address.port, tv)
                   : redisConnectUnixWithTimeout(address.socket_path.c_str(), tv);
  if (context->c == nullptr || context->c->err) {
    return tl::unexpected("connecting: " + context->error());
  }
  redisSetTimeout(context->c, tv);
  std::unique_ptr<BlockingRedisClient> client(new BlockingRedisClient(std::move(context)));
  if (!password.empty()) {
    if (auto r = client->command({"AUTH", password}); !r)
      return tl::unexpected("AUTH: " + r.error());
  }
  if (address.db != 0) {
    const std::string db = std::to_string(address.db);
    if (auto r = client->command({"SELECT", db}); !r) return tl::unexpected("SELECT: " + r.error());
  }
  return client;
}

tl::expected<BlockingRedisReply, std::string> BlockingRedisClient::command(const Args& args) {
  context_->append(args);
  return context_->read();
}

tl::expected<void, std::string> BlockingRedisClient::pipeline(const std::vector<Args>& commands) {
  for (const Args& args : commands) context_->append(args);
  std::string first_error;
  for (size_t i = 0; i < commands.size(); ++i) {
    auto reply = context_->read();
    if (!reply && first_error.empty()) first_error = reply.error();
    if (!reply && context_->c->err) return tl::unexpected(first_error);  // the link is gone
  }
  if (!first_error.empty()) return tl::unexpected(first_error);
  return {};
}

}  // namespace rolter
