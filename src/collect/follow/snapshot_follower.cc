#include "collect/follow/snapshot_follower.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <spdlog/spdlog.h>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <charconv>
#include <condition_variable>
#include <ctime>
#include <optional>

#include "collect/follow/backoff.h"
#include "collect/follow/control_plane_client.h"
#include "collect/follow/saved_snapshot.h"
#include "collect/loop/background_loop.h"
#include "common/mutex.h"
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

enum class Outcome { kUpdated, kNotModified, kRejected, kFailed };

// The follower's series in the node's registry; all null without metrics.
struct Instruments {
  prometheus::Counter* updated = nullptr;
  prometheus::Counter* not_modified = nullptr;
  prometheus::Counter* rejected = nullptr;
  prometheus::Counter* error = nullptr;
  prometheus::Gauge* version = nullptr;
  prometheus::Gauge* up = nullptr;

  static Instruments in(Metrics* metrics) {
    if (metrics == nullptr) return {};
    prometheus::Registry& r = metrics->registry();
    auto& fetches = prometheus::BuildCounter()
                        .Name("rolter_snapshot_fetches_total")
                        .Help(
                            "Polls of the control plane for a snapshot, by result (updated, "
                            "not_modified, rejected, error)")
                        .Register(r);
    return Instruments{
        .updated = &fetches.Add({{"result", "updated"}}),
        .not_modified = &fetches.Add({{"result", "not_modified"}}),
        .rejected = &fetches.Add({{"result", "rejected"}}),
        .error = &fetches.Add({{"result", "error"}}),
        .version = &prometheus::BuildGauge()
                        .Name("rolter_snapshot_version")
                        .Help("Version of the control plane's snapshot being served (0 = none)")
                        .Register(r)
                        .Add({}),
        .up = &prometheus::BuildGauge()
                   .Name("rolter_control_plane_up")
                   .Help("1 after an answered poll of the control plane, 0 after a failed one")
                   .Register(r)
                   .Add({}),
    };
  }
};

void increment(prometheus::Counter* counter) {
  if (counter != nullptr) counter->Increment();
}
void set(prometheus::Gauge* gauge, double value) {
  if (gauge != nullptr) gauge->Set(value);
}

std::optional<uint64_t> parse_version(std::string_view text) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value == 0) return std::nullopt;
  return value;
}

// "2025-01-31T12:00:00Z", for the saved file's comment line.
std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace

struct SnapshotFollower::Impl {
  Impl(Options o, Apply a, Metrics* metrics, Random& r)
      : options(std::move(o)),
        apply(std::move(a)),
        random(r),
        node{options.node_id, options.node_token, options.node_version},
        instruments(Instruments::in(metrics)),
        tls(make_client_tls_context()) {
    auto parsed = parse_endpoint(options.control_plane);
    if (parsed) {
      endpoint = std::move(*parsed);
    } else {
      spdlog::error("snapshot follower: control plane URL '{}' does not parse ({}); not polling",
                    options.control_plane, parsed.error());
    }
    set(instruments.up, 0);
  }

  const Options options;
  const Apply apply;
  Random& random;
  const NodeCredentials node;
  const Instruments instruments;
  std::optional<Endpoint> endpoint;
  asio::ssl::context tls;

  std::atomic<uint64_t> serving{0};
  std::atomic<uint64_t> seen{0};
  std::atomic<bool> up{false};
  std::atomic<uint64_t> updated{0}, not_modified{0}, rejected{0}, errors{0};
  mutable Mutex mu;
  mutable std::condition_variable first;  // notified when serving_any becomes true
  bool serving_any GUARDED_BY(mu) = false;

  bool saved_tried = false;  // the controlling thread's
  bool saved_applied = false;

  // The follower thread's: the current run of failures, for one log line per run.
  uint64_t failures_in_run = 0;
  std::string last_failure_kind;
  uint64_t last_rejected = 0;

  BackgroundLoop background;  // last: its pending work goes before what it uses

  std::vector<std::string> apply_guarded(const std::string& toml, uint64_t version);
  void serve(uint64_t version);
  bool load_saved();

  Task<void> run();
  Task<Outcome> poll();
  Outcome on_document(const std::string& toml, uint64_t version);
  void answered();
  Outcome failed(const std::string& kind, const std::string& why, bool auth);
};

std::vector<std::string> SnapshotFollower::Impl::apply_guarded(const std::string& toml,
                                                               uint64_t version) {
  // `apply` is the caller's; a throw must not take the follower's thread down.
  try {
    return apply(toml, version);
  } catch (const std::exception& e) {
    return {std::string("applying the snapshot failed: ") + e.what()};
  } catch (...) {
    return {"applying the snapshot failed"};
  }
}

void SnapshotFollower::Impl::serve(uint64_t version) {
  serving.store(version);
  set(instruments.version, static_cast<double>(version));
  MutexLock lock(mu);
  serving_any = true;
  first.notify_all();
}

bool SnapshotFollower::Impl::load_saved() {
  if (std::exchange(saved_tried, true)) return saved_applied;
  if (options.state_dir.empty()) return false;
  auto saved = read_saved_snapshot(options.state_dir);
  if (!saved) {
    spdlog::warn("snapshot follower: not using the saved snapshot: {}", saved.error());
    return false;
  }
  if (!*saved) return false;
  const auto& [version, toml] = **saved;
  const auto problems = apply_guarded(toml, version);
  if (!problems.empty()) {
    spdlog::error("snapshot follower: the saved snapshot (version {}) does not apply:", version);
    for (const auto& problem : problems) spdlog::error("  {}", problem);
    return false;
  }
  seen.store(version);
  serve(version);
  spdlog::info("snapshot follower: serving the saved snapshot version {} from {}", version,
               saved_snapshot_path(options.state_dir));
  saved_applied = true;
  return true;
}

void SnapshotFollower::Impl::answered() {
  up.store(true);
  set(instruments.up, 1);
  if (failures_in_run > 0) {
    spdlog::info("snapshot follower: control plane reachable again after {} failures",
                 failures_in_run);
  }
  failures_in_run = 0;
  last_failure_kind.clear();
}

Outcome SnapshotFollower::Impl::failed(const std::string& kind, const std::string& why, bool auth) {
  ++errors;
  increment(instruments.error);
  up.store(false);
  set(instruments.up, 0);
  // One line when a run of failures starts, and when its cause changes; not one per retry.
  if (failures_in_run++ == 0 || kind != last_failure_kind) {
    const auto level = auth ? spdlog::level::err : spdlog::level::warn;
    spdlog::log(level, "snapshot follower: polling {}{} failed: {}; retrying with backoff",
                endpoint->base_url, kPath, why);
  }
  last_failure_kind = kind;
  return Outcome::kFailed;
}

Outcome SnapshotFollower::Impl::on_document(const std::string& toml, uint64_t version) {
  answered();
  const auto problems = apply_guarded(toml, version);
  seen.store(version);
  if (!problems.empty()) {
    ++rejected;
    increment(instruments.rejected);
    if (std::exchange(last_rejected, version) != version) {
      spdlog::error(
          "snapshot follower: snapshot version {} rejected ({} problems); still serving "
          "version {}:",
          version, problems.size(), serving.load());
      for (const auto& problem : problems) spdlog::error("  {}", problem);
    }
    return Outcome::kRejected;
  }
  if (!options.state_dir.empty()) {
    const std::string origin = "from " + endpoint->base_url + " at " + utc_now();
    if (auto saved = write_saved_snapshot(options.state_dir, {version, toml}, origin); !saved) {
      spdlog::warn("snapshot follower: snapshot version {} applied but not saved: {}", version,
                   saved.error());
    }
  }
  serve(version);
  ++updated;
  increment(instruments.updated);
  spdlog::info("snapshot follower: serving snapshot version {}", version);
  return Outcome::kUpdated;
}

Task<Outcome> SnapshotFollower::Impl::poll() {
  auto request = control_plane_request(http::verb::get, *endpoint,
                                       std::string(kPath) + "?version=" + std::to_string(seen),
                                       node, serving.load());
  const ExchangeLimits limits{.connect_timeout = options.connect_timeout,
                              .deadline = options.poll_timeout,
                              .max_body_bytes = kMaxDocumentBytes};
  auto reply = co_await exchange_with_control_plane(*endpoint, tls, std::move(request), limits);
  if (!reply) co_return failed("connection", reply.error(), false);
  const std::string status = "status " + std::to_string(reply->status);
  switch (reply->status) {
    case 200: {
      const auto version = parse_version(reply->snapshot_version);
      if (!version) {
        co_return failed("protocol",
                         "a 200 without a valid x-rolter-snapshot-version ('" +
                             body_excerpt(reply->snapshot_version, 40) + "')",
                         false);
      }
      co_return on_document(reply->body, *version);
    }
    case 304:
      answered();
      ++not_modified;
      increment(instruments.not_modified);
      co_return Outcome::kNotModified;
    case 401:
    case 403:
      co_return failed(
          status,
          status + ": the control plane refused the node token" +
              (node.node_token.empty() ? " (ROLTER_NODE_TOKEN is not set)"
               : reply->status == 401
                   ? " (is ROLTER_NODE_TOKEN the one the control plane gave this node?)"
                   : " (is the token meant for node '" + node.node_id + "'?)"),
          true);
    default: {
      std::string excerpt = body_excerpt(reply->body);
      // A body is the control plane's message; it never should, but must not echo the secret.
      if (!node.node_token.empty() && excerpt.find(node.node_token) != std::string::npos) {
        excerpt.clear();
      }
      co_return failed(status, excerpt.empty() ? status : status + ": " + excerpt, false);
    }
  }
}

Task<void> SnapshotFollower::Impl::run() {
  Backoff backoff(options.backoff_min, options.backoff_max, random);
  asio::steady_timer timer(background.io());
  for (;;) {
    const auto started = std::chrono::steady_clock::now();
    const Outcome outcome = co_await poll();
    if (outcome != Outcome::kFailed) {
      // An answer, even a rejected document, means the next poll may go at once: the control
      // plane holds it until something changes. One that answers "nothing new" at once (it is
      // shutting down, say) is not asked again sooner than kMinNotModifiedInterval.
      backoff.reset();
      const auto took = std::chrono::steady_clock::now() - started;
      if (outcome == Outcome::kNotModified && took < kMinNotModifiedInterval) {
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

bool SnapshotFollower::load_saved() { return impl_->load_saved(); }

void SnapshotFollower::start() {
  impl_->load_saved();
  if (!impl_->endpoint) return;
  impl_->background.start([impl = impl_.get()] { return impl->run(); });
}

void SnapshotFollower::stop() { impl_->background.stop(); }

uint64_t SnapshotFollower::serving_version() const { return impl_->serving.load(); }
uint64_t SnapshotFollower::seen_version() const { return impl_->seen.load(); }

bool SnapshotFollower::wait_first(std::chrono::milliseconds timeout) const {
  MutexLock lock(impl_->mu);
  return lock.wait_for(impl_->first, timeout,
                       [&]() REQUIRES(impl_->mu) { return impl_->serving_any; });
}

SnapshotFollower::Counts SnapshotFollower::counts() const {
  return Counts{.updated = impl_->updated.load(),
                .not_modified = impl_->not_modified.load(),
                .rejected = impl_->rejected.load(),
                .errors = impl_->errors.load()};
}

bool SnapshotFollower::control_plane_up() const { return impl_->up.load(); }

}  // namespace rolter
