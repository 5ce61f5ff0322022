// SnapshotApplier: the node's half of following the control plane that does not talk to it. It
// applies the whole rolter.toml documents the follower receives, keeps each applied one in
// `{state_dir}/snapshot.toml` (SavedSnapshot), and says which version is served.
//
//   offer(toml, M)  `apply` builds and publishes the document, as a file reload does. Applied: it
//                   is saved and M is served. Rejected: every problem is logged (once per
//                   version), and the old snapshot keeps serving. M is "seen" either way, so the
//                   next poll does not ask for the broken document again.
//   load_saved()    applies the saved document, so a restarted node serves its last configuration
//                   even while the control plane is down.
//
// Thread-safety: load_saved() and offer() from one thread at a time (`apply` never runs twice at
// once). serving_version(), seen_version() and wait_first() from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/mutex.h"

namespace prometheus {
class Gauge;
}

namespace rolter {

class SnapshotApplier {
 public:
  // Builds and publishes a snapshot from a whole rolter.toml document; returns the problems
  // (empty = applied and published). A throw counts as a problem.
  using Apply = std::function<std::vector<std::string>(const std::string& toml, uint64_t version)>;

  // `state_dir` empty = nothing saved, nothing loaded. `version_gauge` (may be null, must outlive
  // the object) is set to the version served.
  SnapshotApplier(std::string state_dir, Apply apply, prometheus::Gauge* version_gauge);

  // Applies the saved document when there is one; true when it was applied and is now served.
  // Only the first call does anything; later calls repeat its answer.
  bool load_saved();

  // Applies `toml` as `version`; true when applied (and then saved, with `origin`, "from <where>",
  // in the file's comment line, and served).
  bool offer(const std::string& toml, uint64_t version, const std::string& origin);

  // The version served: the last one applied; 0 = none yet.
  uint64_t serving_version() const { return serving_.load(); }
  // The last version offered, applied or not.
  uint64_t seen_version() const { return seen_.load(); }
  // Waits until some snapshot is served; false when `timeout` passed first.
  bool wait_first(std::chrono::milliseconds timeout) const;

 private:
  std::vector<std::string> apply_guarded(const std::string& toml, uint64_t version);
  void serve(uint64_t version);

  const std::string state_dir_;
  const Apply apply_;
  prometheus::Gauge* const version_gauge_;
  std::atomic<uint64_t> serving_{0};
  std::atomic<uint64_t> seen_{0};
  mutable Mutex mu_;
  mutable std::condition_variable first_;  // notified when serving_any_ becomes true
  bool serving_any_ GUARDED_BY(mu_) = false;
  // The applying thread's.
  bool saved_tried_ = false;
  bool saved_applied_ = false;
  uint64_t last_rejected_ = 0;  // for one log of a version's problems
};

}  // namespace rolter
