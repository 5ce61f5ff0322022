#include "collect/shared_prefixes/shared_prefix_stream.h"

#include <spdlog/spdlog.h>
#include <boost/asio/steady_timer.hpp>

#include <cstdlib>
#include <optional>

#include "balance/prefix/prefix_sharing.h"
#include "collect/follow/backoff.h"
#include "collect/follow/failure_run.h"
#include "collect/loop/background_loop.h"
#include "collect/loop/snapshot_changes.h"
#include "collect/shared_prefixes/redis_client.h"
#include "observe/metrics.h"
#include "snapshot/snapshot_store.h"

namespace rolter {
namespace {

using std::chrono::milliseconds;

// A read waits this long for new entries: the delay before this node sees another's insertion is
// at most this plus a round trip, and stop() waits at most this.
constexpr milliseconds kBlock{100};
constexpr milliseconds kTimeout{2000};  // connect, and any one command
constexpr milliseconds kIdleTick{500};  // while sharing is off
constexpr size_t kReadCount = 512;      // entries per read

// An entry's fields, by name; nullopt when it is not one of ours.
struct Entry {
  std::string node;
  PrefixSharing::Insert insert;
};
std::optional<Entry> parse_entry(const BlockingRedisReply& fields) {
  Entry e;
  for (size_t i = 0; i + 1 < fields.elements.size(); i += 2) {
    const std::string& name = fields.elements[i].text;
    std::string value = fields.elements[i + 1].text;
    if (name == "n") e.node = std::move(value);
    if (name == "t") e.insert.tree = std::move(value);
    if (name == "c") e.insert.candidate = std::move(value);
    if (name == "p") e.insert.text = std::move(value);
  }
  if (e.insert.tree.empty() || e.insert.candidate.empty() || e.insert.text.empty()) {
    return std::nullopt;
  }
  return e;
}

bool same_target(const SharedStateConfig& a, const SharedStateConfig& b) {
  return a.redis_url == b.redis_url && a.redis_password_env == b.redis_password_env &&
         a.key == b.key;
}

}  // namespace

struct SharedPrefixStream::Impl {
  Impl(SnapshotStore& s, PrefixSharing& h, Random& r) : changes(s), hub(h), random(r) {
    char id[17];
    std::snprintf(id, sizeof id, "%016llx", static_cast<unsigned long long>(random.next_u64()));
    node_id = id;
  }

  SnapshotChanges changes;
  PrefixSharing& hub;
  Random& random;
  std::string node_id;  // tells this process's entries from the others'
  std::optional<SharedStateConfig> config;
  Metrics* metrics = nullptr;  // the current snapshot's
  std::unique_ptr<BlockingRedisClient> client;
  std::string last_id;  // the newest entry read
  FailureRun failures;
  BackgroundLoop background;  // last

  Task<void> run();
  void follow_config();
  bool connect();
  tl::expected<void, std::string> turn();
  tl::expected<void, std::string> replay();
  tl::expected<void, std::string> flush();
  tl::expected<void, std::string> read_new();
  size_t deliver(const BlockingRedisReply& entries, bool skip_own);
  void fail(const std::string& kind, const std::string& why);
};

void SharedPrefixStream::Impl::follow_config() {
  auto next = changes.next();
  if (!next) return;
  std::optional<SharedStateConfig> wanted;
  metrics = *next ? (*next)->metrics() : nullptr;
  if (*next && !(*next)->config().shared_state.redis_url.empty()) {
    wanted = (*next)->config().shared_state;
  }
  const bool same = wanted && config && same_target(*wanted, *config);
  if (!same && client) {
    spdlog::info("shared prefixes: [shared_state] changed; disconnecting from {}",
                 config->redis_url);
    client.reset();
  }
  config = std::move(wanted);
}

void SharedPrefixStream::Impl::fail(const std::string& kind, const std::string& why) {
  client.reset();
  if (metrics != nullptr) metrics->set_shared_state_up(false);
  hub.take_outbox();  // what could not be sent is dropped: the node routes on its own meanwhile
  if (failures.failed(kind)) {
    spdlog::warn("shared prefixes: {} ({}): {}; routing on this node's own trees meanwhile", kind,
                 config ? config->redis_url : "", why);
  }
}

bool SharedPrefixStream::Impl::connect() {
  const auto address = parse_redis_url(config->redis_url);  // checked by the config reader
  if (!address || address->tls) return false;  // the blocking client has no TLS (refused at load)
  std::string password;
  if (!config->redis_password_env.empty()) {
    const char* value = std::getenv(config->redis_password_env.c_str());
    password = value != nullptr ? value : "";
  }
  auto connected = BlockingRedisClient::connect(*address, password, kTimeout);
  if (!connected) {
    fail("connect", connected.error());
    return false;
  }
  client = std::move(*connected);
  if (metrics != nullptr) metrics->set_shared_state_up(true);
  if (auto replayed = replay(); !replayed) {
    fail("replay", replayed.error());
    return false;
  }
  if (const uint64_t run = failures.ended(); run > 0) {
    spdlog::info("shared prefixes: {} reachable again after {} failures", config->redis_url, run);
  } else {
    spdlog::info("shared prefixes: sharing through {} (stream {})", config->redis_url, config->key);
  }
  return true;
}

size_t SharedPrefixStream::Impl::deliver(const BlockingRedisReply& entries, bool skip_own) {
  size_t n = 0;
  for (const BlockingRedisReply& entry : entries.elements) {
    if (entry.elements.size() != 2) continue;
    last_id = entry.elements[0].text;
    auto parsed = parse_entry(entry.elements[1]);
    if (!parsed || (skip_own && parsed->node == node_id)) continue;
    hub.deliver(parsed->insert);
    ++n;
  }
  if (metrics != nullptr && n > 0) metrics->count_shared_prefixes(0, n);
  return n;
}

tl::expected<void, std::string> SharedPrefixStream::Impl::replay() {
  hub.take_attached();
  const std::string count = std::to_string(std::max<uint64_t>(config->replay_entries, 1));
  auto newest = client->command({"XREVRANGE", config->key, "+", "-", "COUNT", count});
  if (!newest) return tl::unexpected(newest.error());
  last_id = "0-0";
  if (config->replay_entries > 0) {
    BlockingRedisReply oldest_first;
    oldest_first.elements.assign(newest->elements.rbegin(), newest->elements.rend());
    deliver(oldest_first, /*skip_own=*/false);
  } else if (!newest->elements.empty() && newest->elements.front().elements.size() == 2) {
    last_id = newest->elements.front().elements[0].text;
  }
  return {};
}

tl::expected<void, std::string> SharedPrefixStream::Impl::flush() {
  const auto outbox = hub.take_outbox();
  if (outbox.empty()) return {};
  const std::string max = std::to_string(config->max_entries);
  std::vector<BlockingRedisClient::Args> commands;
  commands.reserve(outbox.size());
  for (const auto& insert : outbox) {
    commands.push_back({"XADD", config->key, "MAXLEN", "~", max, "*", "n", node_id, "t",
                        insert.tree, "c", insert.candidate, "p", insert.text});
  }
  if (auto sent_all = client->pipeline(commands); !sent_all) return sent_all;
  if (metrics != nullptr) metrics->count_shared_prefixes(outbox.size(), 0);
  return {};
}

tl::expected<void, std::string> SharedPrefixStream::Impl::read_new() {
  const std::string block = std::to_string(kBlock.count());
  const std::string count = std::to_string(kReadCount);
  auto reply =
      client->command({"XREAD", "COUNT", count, "BLOCK", block, "STREAMS", config->key, last_id});
  if (!reply) return tl::unexpected(reply.error());
  for (const BlockingRedisReply& stream : reply->elements) {  // nil (timed out) has none
    if (stream.elements.size() == 2) deliver(stream.elements[1], /*skip_own=*/true);
  }
  return {};
}

tl::expected<void, std::string> SharedPrefixStream::Impl::turn() {
  if (hub.take_attached()) {
    // A reload built new trees: give them what the fleet served lately. take_attached() again
    // inside replay() is harmless.
    if (auto r = replay(); !r) return r;
  }
  if (auto r = flush(); !r) return r;
  return read_new();
}

Task<void> SharedPrefixStream::Impl::run() {
  Backoff backoff(milliseconds(250), milliseconds(10000), random);
  asio::steady_timer timer(background.io());
  for (;;) {
    follow_config();
    std::chrono::microseconds wait{0};
    if (!config) {
      hub.take_outbox();
      wait = kIdleTick;
    } else if (!client && !connect()) {
      wait = backoff.next();
    } else if (auto ok = turn(); !ok) {
      fail("stream", ok.error());
      wait = backoff.next();
    } else {
      backoff.reset();
    }
    // The blocking read is the pace; the timer only gives stop() a turn.
    timer.expires_after(wait);
    auto [ec] = co_await timer.async_wait(kNoThrow);
    if (ec) co_return;
  }
}

SharedPrefixStream::SharedPrefixStream(SnapshotStore& store, PrefixSharing& hub, Random& random)
    : impl_(std::make_unique<Impl>(store, hub, random)) {}

SharedPrefixStream::~SharedPrefixStream() { stop(); }

void SharedPrefixStream::start() {
  impl_->background.start([impl = impl_.get()] { return impl->run(); });
}

void SharedPrefixStream::stop() { impl_->background.stop(); }

}  // namespace rolter
