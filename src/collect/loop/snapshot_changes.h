// SnapshotChanges: how a background service follows the configuration. Each turn of its loop asks
// for the current snapshot and gets it only when it differs from the one it got last, so the
// service rebuilds what it polls once per published snapshot and never in between.
//
//   SnapshotChanges changes(store);
//   if (auto snapshot = changes.next()) rebuild(snapshot->get());  // *snapshot may be null: none yet
//
// Thread-safety: one thread (the service's loop).
#pragma once

#include <memory>
#include <optional>

#include "snapshot/snapshot_store.h"

namespace rolter {

class SnapshotChanges {
 public:
  // `store` must outlive this object.
  explicit SnapshotChanges(const SnapshotStore& store) : store_(store) {}

  // The current snapshot when it is not the one returned last (the first call returns it even
  // when none is published yet: a null pointer); nullopt otherwise.
  std::optional<std::shared_ptr<const Snapshot>> next() {
    std::shared_ptr<const Snapshot> now = store_.current();
    if (started_ && now == seen_) return std::nullopt;
    started_ = true;
    seen_ = now;
    return now;
  }
  // Forgets what was seen: the next call returns the current snapshot again.
  void reset() {
    started_ = false;
    seen_.reset();
  }

 private:
  const SnapshotStore& store_;
  std::shared_ptr<const Snapshot> seen_;
  bool started_ = false;
};

}  // namespace rolter
