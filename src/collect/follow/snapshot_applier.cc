#include "collect/follow/snapshot_applier.h"

#include <prometheus/gauge.h>
#include <spdlog/spdlog.h>

#include <ctime>
#include <utility>

#include "collect/follow/saved_snapshot.h"

namespace rolter {
namespace {

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

SnapshotApplier::SnapshotApplier(std::string state_dir, Apply apply,
                                 prometheus::Gauge* version_gauge)
    : state_dir_(std::move(state_dir)), apply_(std::move(apply)), version_gauge_(version_gauge) {}

std::vector<std::string> SnapshotApplier::apply_guarded(const std::string& toml, uint64_t version) {
  // `apply` is the caller's; a throw must not take the applying thread down.
  try {
    return apply_(toml, version);
  } catch (const std::exception& e) {
    return {std::string("applying the snapshot failed: ") + e.what()};
  } catch (...) {
    return {"applying the snapshot failed"};
  }
}

void SnapshotApplier::serve(uint64_t version) {
  serving_.store(version);
  if (version_gauge_ != nullptr) version_gauge_->Set(static_cast<double>(version));
  MutexLock lock(mu_);
  serving_any_ = true;
  first_.notify_all();
}

bool SnapshotApplier::load_saved() {
  if (std::exchange(saved_tried_, true)) return saved_applied_;
  if (state_dir_.empty()) return false;
  auto saved = read_saved_snapshot(state_dir_);
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
  seen_.store(version);
  serve(version);
  spdlog::info("snapshot follower: serving the saved snapshot version {} from {}", version,
               saved_snapshot_path(state_dir_));
  saved_applied_ = true;
  return true;
}

bool SnapshotApplier::offer(const std::string& toml, uint64_t version, const std::string& origin) {
  const auto problems = apply_guarded(toml, version);
  seen_.store(version);
  if (!problems.empty()) {
    if (std::exchange(last_rejected_, version) != version) {
      spdlog::error(
          "snapshot follower: snapshot version {} rejected ({} problems); still serving "
          "version {}:",
          version, problems.size(), serving_.load());
      for (const auto& problem : problems) spdlog::error("  {}", problem);
    }
    return false;
  }
  if (!state_dir_.empty()) {
    const SavedSnapshot document{version, toml};
    if (auto saved = write_saved_snapshot(state_dir_, document, origin + " at " + utc_now());
        !saved) {
      spdlog::warn("snapshot follower: snapshot version {} applied but not saved: {}", version,
                   saved.error());
    }
  }
  serve(version);
  spdlog::info("snapshot follower: serving snapshot version {}", version);
  return true;
}

bool SnapshotApplier::wait_first(std::chrono::milliseconds timeout) const {
  MutexLock lock(mu_);
  return lock.wait_for(first_, timeout, [&]() REQUIRES(mu_) { return serving_any_; });
}

}  // namespace rolter
