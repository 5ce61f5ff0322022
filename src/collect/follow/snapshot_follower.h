// SnapshotFollower: keeps a data-plane node's configuration in step with the control plane.
//
// The control plane publishes the effective configuration as a whole rolter.toml document with a
// version. The follower long-polls `GET {control_plane}/internal/snapshot?version=N` (N = the last
// version seen, 0 at first) on a thread of its own:
//   200  the document and its version M (x-rolter-snapshot-version), offered to the
//        SnapshotApplier: `apply` builds and publishes it, as a file reload does. Applied: saved
//        to `{state_dir}/snapshot.toml` (SavedSnapshot) and M is served. Rejected: every problem is logged, the old snapshot keeps serving, and
//        the next poll asks with version=M so the broken document is not sent again and again,
//        while x-rolter-snapshot-version still names the version really served.
//   304  nothing new (the control plane held the request up to ~30 s): ask again at once (but
//        never sooner than 250 ms after the previous 304, should one come back at once).
//   401/403, other answers, refused connections, timeouts: wait (Backoff: uniform up to a bound
//        that doubles from backoff_min to backoff_max, reset by any answered poll) and ask
//        again. The first failure of a run is logged, and the recovery; not every retry
//        (FailureRun).
//
// Before the first poll, a saved document is applied (load_saved()), so a restarted node serves its
// last configuration even while the control plane is down.
//
//   SnapshotFollower follower(options, [&](const std::string& toml, uint64_t version) {
//     return build_and_publish(toml, version);  // the problems; empty = published
//   }, &metrics);
//   follower.load_saved();  // before listening
//   follower.start();
//   follower.wait_first(std::chrono::seconds(10));
//
// Metrics (when given): rolter_snapshot_fetches_total{result="updated|not_modified|error|
// rejected"}, rolter_snapshot_version (the version served), rolter_control_plane_up (1 after an
// answered poll, 0 after a failed one).
//
// Thread-safety: load_saved(), start() and stop() from one controlling thread. `apply` runs on the
// follower's thread once started (on the caller's in load_saved()), never two at a time.
// serving_version(), seen_version(), counts(), control_plane_up() and wait_first() may be called
// from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/random.h"

namespace rolter {

class Metrics;

class SnapshotFollower {
 public:
  // Builds and publishes a snapshot from a whole rolter.toml document; returns the problems
  // (empty = applied and published).
  using Apply = std::function<std::vector<std::string>(const std::string& toml, uint64_t version)>;

  struct Options {
    std::string control_plane;  // base URL, http:// or https://
    std::string node_id;
    std::string node_token;    // empty = no Authorization header
    std::string node_version;  // rolter's software version
    std::string state_dir;     // empty = nothing saved, nothing loaded
    // The first wait after a failure is at most backoff_min; each failure doubles the bound up to
    // backoff_max. A quarter second lets a control plane restart be noticed quickly; ten seconds
    // keeps a fleet of nodes from hammering one that is down.
    std::chrono::milliseconds backoff_min{250};
    std::chrono::milliseconds backoff_max{10000};
    // The control plane holds a poll up to ~30 s; 45 s leaves room for a slow answer before the
    // connection is taken for dead.
    std::chrono::milliseconds poll_timeout{45000};
    std::chrono::milliseconds connect_timeout{2000};
  };

  // How the polls ended, since construction.
  struct Counts {
    uint64_t updated = 0;       // 200, applied
    uint64_t not_modified = 0;  // 304
    uint64_t rejected = 0;      // 200, refused by `apply`
    uint64_t errors = 0;        // anything else, connection failures included
  };

  // `metrics` may be null; it and `random` must outlive the object. `random` is drawn from on the
  // follower's thread only.
  SnapshotFollower(Options options, Apply apply, Metrics* metrics,
                   Random& random = default_random());
  ~SnapshotFollower();
  SnapshotFollower(const SnapshotFollower&) = delete;
  SnapshotFollower& operator=(const SnapshotFollower&) = delete;

  // Applies `{state_dir}/snapshot.toml` when there is one. Returns true when it was applied and
  // is now served. Only the first call does anything; start() calls it when nobody did.
  // REQUIRES: not started.
  bool load_saved();

  // Starts polling on the follower's thread. Once.
  void start();
  // Stops at once, interrupting a poll the control plane holds. Idempotent.
  void stop();

  // The version served: the last one applied (from the control plane or the saved file); 0 =
  // none yet.
  uint64_t serving_version() const;
  // The last version received, applied or not.
  uint64_t seen_version() const;
  // Waits until some snapshot is served; false when `timeout` passed first.
  bool wait_first(std::chrono::milliseconds timeout) const;

  Counts counts() const;
  // True after an answered poll, false after a failed one (and before the first).
  bool control_plane_up() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rolter
