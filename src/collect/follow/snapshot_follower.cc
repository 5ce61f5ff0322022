#include "collect/follow/snapshot_follower.h"

#include <spdlog/spdlog.h>
#include <boost/asio/steady_timer.hpp>

#include <array>
#include <atomic>
#include <charconv>
#include <optional>

#include "collect/follow/backoff.h"
#include "collect/follow/control_plane_client.h"
#include "collect/follow/failure_run.h"
#include "collect/follow/snapshot_applier.h"
#include "collect/loop/background_loop.h"
#include "observe/metrics.h"
#include "upstream/upstream_connection.h"

namespace rolter {
namespace {

// The least time between two polls answered 304 (see run()).
constexpr auto kMinNotModifiedInterval = std::chrono::milliseconds(250);

namespace http = beast::http;

constexpr const char* kPath = "/internal/snapshot";
// A configuration with thousands of routes and keys is a few megabytes; a larger answer is not a
// configuration.
constexpr size_t kMaxDocumentBytes = 16 * 1024 * 1024;

using Fetch = Metrics::SnapshotFetch;

std::optional<uint64_t> parse_version(std::string_view text) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value == 0) return std::nullopt;
  return value;
}

}  // namespace

struct SnapshotFollower::Impl {
  Impl(Options o, Apply a, Metrics* metrics, Random& r)
      : options(std::move(o)),
        random(r),
        node{options.node_id, options.node_token, options.node_version},
        instruments(metrics != nullptr ? metrics->snapshot_follower()
                                       : Metrics::SnapshotFollowerInstruments{}),
        applier(options.state_dir, std::move(a), instruments.version) {
    auto parsed = parse_endpoint(options.control_plane);
    if (parsed) {
      endpoint = std::move(*parsed);
    } else {
      spdlog::error("snapshot follower: control plane URL '{}' does not parse ({}); not polling",
                    options.control_plane, parsed.error());
    }
  }

  const Options options;
  Random& random;
  const NodeCredentials node;
  const Metrics::SnapshotFollowerInstruments instruments;
  SnapshotApplier applier;
  std::optional<Endpoint> endpoint;
  ClientTls tls;  // the process's, made at the first https:// connection
  std::array<std::atomic<uint64_t>, 4> counts{};  // indexed by Fetch
  std::atomic<bool> up{false};
  FailureRun failures;  // the follower thread's

  BackgroundLoop background;  // last: its pending work goes before what it uses

  Task<void> run();
  Task<Fetch> poll();
  Fetch answered(Fetch outcome);
  Fetch failed(const std::string& kind, const std::string& why, bool auth);
  void count(Fetch outcome);
};

void SnapshotFollower::Impl::count(Fetch outcome) {
  ++counts[static_cast<size_t>(outcome)];
  Metrics::count_snapshot_fetch(instruments, outcome);
  up.store(outcome != Fetch::kError);
}

Fetch SnapshotFollower::Impl::answered(Fetch outcome) {
  count(outcome);
  if (const uint64_t run = failures.ended(); run > 0) {
    spdlog::info("snapshot follower: control plane reachable again after {} failures", run);
  }
  return outcome;
}

Fetch SnapshotFollower::Impl::failed(const std::string& kind, const std::string& why, bool auth) {
  count(Fetch::kError);
  if (failures.failed(kind)) {
    const auto level = auth ? spdlog::level::err : spdlog::level::warn;
    spdlog::log(level, "snapshot follower: polling {}{} failed: {}; retrying with backoff",
                endpoint->base_url, kPath, why);
  }
  return Fetch::kError;
}

Task<Fetch> SnapshotFollower::Impl::poll() {
  const std::string path =
      std::string(kPath) + "?version=" + std::to_string(applier.seen_version());
  auto request =
      control_plane_request(http::verb::get, *endpoint, path, node, applier.serving_version());
  const ExchangeLimits limits{.connect_timeout = options.connect_timeout,
                              .deadline = options.poll_timeout,
                              .max_body_bytes = kMaxDocumentBytes};
  auto reply = co_await exchange_with_control_plane(*endpoint, tls, std::move(request), limits);
  if (!reply) co_return failed("connection", reply.error(), false);
  if (reply->status == 304) co_return answered(Fetch::kNotModified);
  if (reply->status != 200) {
    co_return failed("status " + std::to_string(reply->status), explain_reply(*reply, node),
                     refused_credentials(*reply));
  }
  const auto version = parse_version(reply->snapshot_version);
  if (!version) {
    co_return failed("protocol",
                     "a 200 without a valid x-rolter-snapshot-version ('" +
                         body_excerpt(reply->snapshot_version, 40) + "')",
                     false);
  }
  const bool applied = applier.offer(reply->body, *version, "from " + endpoint->base_url);
  co_return answered(applied ? Fetch::kUpdated : Fetch::kRejected);
}

Task<void> SnapshotFollower::Impl::run() {
  Backoff backoff(options.backoff_min, options.backoff_max, random);
  asio::steady_timer timer(background.io());
  for (;;) {
    const auto started = std::chrono::steady_clock::now();
    const Fetch outcome = co_await poll();
    if (outcome != Fetch::kError) {
      // An answer, even a rejected document, means the next poll may go at once: the control
      // plane holds it until something changes. One that answers "nothing new" at once (it is
      // shutting down, say) is not asked again sooner than kMinNotModifiedInterval.
      backoff.reset();
      const auto took = std::chrono::steady_clock::now() - started;
      if (outcome == Fetch::kNotModified && took < kMinNotModifiedInterval) {
        timer.expires_after(kMinNotModifiedInterval - took);
        auto [ec] = co_await timer.async_wait(kNoThrow);
        if (ec) co_return;
      }
      continue;
    }
    timer.expires_after(backoff.next());
    auto [ec] = co_await timer.async_wait(kNoThrow);
    if (ec) co_return;
  }
}

SnapshotFollower::SnapshotFollower(Options options, Apply apply, Metrics* metrics, Random& random)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(apply), metrics, random)) {}

SnapshotFollower::~SnapshotFollower() { stop(); }

bool SnapshotFollower::load_saved() { return impl_->applier.load_saved(); }

void SnapshotFollower::start() {
  impl_->applier.load_saved();
  if (!impl_->endpoint) return;
  impl_->background.start([impl = impl_.get()] { return impl->run(); });
}

void SnapshotFollower::stop() { impl_->background.stop(); }

uint64_t SnapshotFollower::serving_version() const { return impl_->applier.serving_version(); }
uint64_t SnapshotFollower::seen_version() const { return impl_->applier.seen_version(); }

bool SnapshotFollower::wait_first(std::chrono::milliseconds timeout) const {
  return impl_->applier.wait_first(timeout);
}

SnapshotFollower::Counts SnapshotFollower::counts() const {
  const auto& c = impl_->counts;
  return Counts{.updated = c[static_cast<size_t>(Fetch::kUpdated)].load(),
                .not_modified = c[static_cast<size_t>(Fetch::kNotModified)].load(),
                .rejected = c[static_cast<size_t>(Fetch::kRejected)].load(),
                .errors = c[static_cast<size_t>(Fetch::kError)].load()};
}

bool SnapshotFollower::control_plane_up() const { return impl_->up.load(); }

}  // namespace rolter
