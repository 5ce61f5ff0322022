#include "app/snapshot_publisher.h"

#include <spdlog/spdlog.h>

#include <memory>

#include "config/loader.h"
#include "observe/metrics.h"
#include "proxy/request_log.h"

namespace rolter {
namespace {

// The access log follows the published config (server.access_log). A file that cannot be opened
// here keeps the lines where they went: the rest of the config is served all the same.
void follow_access_log(const std::string& destination) {
  const std::string before = access_log_destination();
  if (auto set = set_access_log_destination(destination); !set) {
    spdlog::error("server.access_log: {}; access lines still go to {}", set.error(), before);
    return;
  }
  if (const std::string now = access_log_destination(); now != before) {
    spdlog::info("access log: {} (was {})", now, before);
  }
}

}  // namespace

BalancerDeps SnapshotPublisher::deps_for(const Config& config) {
  // Prefix trees are shared with the other gateway nodes only when [shared_state] says how.
  BalancerDeps deps;
  if (!config.shared_state.redis_url.empty()) deps.sharing = &tracker_.prefix_sharing();
  return deps;
}

tl::expected<std::function<void()>, std::vector<std::string>> SnapshotPublisher::prepare(
    const std::string& text, uint64_t version) {
  std::vector<std::string> problems;
  auto loaded = load_config_text(text, source_name_);
  if (!loaded) {
    for (const auto& error : loaded.error()) problems.push_back(error.to_string());
    return tl::unexpected(std::move(problems));
  }
  const uint64_t generation =
      discovered_ != nullptr ? discovered_->apply(loaded->config) : uint64_t{0};
  const BalancerDeps deps = deps_for(loaded->config);
  std::string access_log = loaded->config.server.access_log;
  auto snapshot = build_snapshot(std::move(loaded->config), tracker_, deps, version, metrics_);
  if (!snapshot) {
    for (const auto& error : snapshot.error()) problems.push_back(source_name_ + ": " + error);
    return tl::unexpected(std::move(problems));
  }
  auto shared = std::make_shared<std::shared_ptr<const Snapshot>>(std::move(*snapshot));
  return [this, shared, version, generation, access_log = std::move(access_log)] {
    follow_access_log(access_log);
    if (metrics_ != nullptr) metrics_->config_reload(true, version);
    {
      MutexLock lock(publish_mu_);
      store_.publish(std::move(*shared));
      published_generation_ = generation;
    }
    // The counters of limits no rule names any more (a deleted key): the snapshots that named
    // them are gone by the next publication, so each is dropped at most one reload late.
    tracker_.limits().cells().prune();
  };
}

bool SnapshotPublisher::refresh_discovered() {
  if (discovered_ == nullptr) return false;
  std::shared_ptr<const Snapshot> current = store_.current();
  if (current == nullptr) return false;
  {
    MutexLock lock(publish_mu_);
    if (published_generation_ == discovered_->generation()) return false;
  }
  Config config = current->config();
  const uint64_t generation = discovered_->apply(config);
  const BalancerDeps deps = deps_for(config);
  auto snapshot = build_snapshot(std::move(config), tracker_, deps, current->version(), metrics_);
  MutexLock lock(publish_mu_);
  if (!snapshot) {
    // Not retried until the instances change again: the same sets would fail the same way.
    for (const auto& error : snapshot.error()) {
      spdlog::error("discovery: {}: {}; still serving the instances found before", source_name_,
                    error);
    }
    published_generation_ = generation;
    return false;
  }
  if (store_.current() != current) return false;
  store_.publish(std::move(*snapshot));
  published_generation_ = generation;
  return true;
}

}  // namespace rolter
