#include "app/snapshot_publisher.h"

#include <spdlog/spdlog.h>

#include <memory>

#include "config/loader.h"
#include "observe/metrics.h"

namespace rolter {

tl::expected<std::function<void()>, std::vector<std::string>> SnapshotPublisher::prepare(
    const std::string& text, uint64_t version) {
  std::vector<std::string> problems;
  auto loaded = load_config_text(text, source_name_);
  if (!loaded) {
    for (const auto& error : loaded.error()) problems.push_back(error.to_string());
    return tl::unexpected(std::move(problems));
  }
  // Prefix trees are shared with the other gateway nodes only when [shared_state] says how.
  BalancerDeps deps;
  if (!loaded->config.shared_state.redis_url.empty()) deps.sharing = &tracker_.prefix_sharing();
  auto snapshot = build_snapshot(std::move(loaded->config), tracker_, deps, version, metrics_);
  if (!snapshot) {
    for (const auto& error : snapshot.error()) problems.push_back(source_name_ + ": " + error);
    return tl::unexpected(std::move(problems));
  }
  auto shared = std::make_shared<std::shared_ptr<const Snapshot>>(std::move(*snapshot));
  return [this, shared, version] {
    if (metrics_ != nullptr) metrics_->config_reload(true, version);
    store_.publish(std::move(*shared));
    // The counters of limits no rule names any more (a deleted key): the snapshots that named
    // them are gone by the next publication, so each is dropped at most one reload late.
    tracker_.limits().cells().prune();
  };
}

}  // namespace rolter
