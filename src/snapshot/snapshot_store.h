// SnapshotStore: publication of the current snapshot (SPEC §5, STYLE "immutable snapshots").
//
// publish() replaces the current snapshot and hands it to every subscriber; the server subscribes
// one callback per worker thread, which posts the new pointer to that worker's event loop. Each
// worker then reads its own copy of the pointer without any lock or shared atomic, and a request
// pins the snapshot it started with by copying that shared_ptr.
//
// Thread-safety: all methods may be called from any thread. Subscribers are called on the
// publishing thread, under no lock, and must not block.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "common/mutex.h"
#include "snapshot/snapshot.h"

namespace rolter {

class SnapshotStore {
 public:
  using Subscriber = std::function<void(std::shared_ptr<const Snapshot>)>;

  std::shared_ptr<const Snapshot> current() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return current_;
  }

  // Calls `subscriber` with the current snapshot (if any) now, and with every later one.
  void subscribe(Subscriber subscriber) EXCLUDES(mu_) {
    std::shared_ptr<const Snapshot> now;
    {
      MutexLock lock(mu_);
      subscribers_.push_back(subscriber);
      now = current_;
    }
    if (now) subscriber(now);
  }

  void publish(std::shared_ptr<const Snapshot> snapshot) EXCLUDES(mu_) {
    std::vector<Subscriber> subscribers;
    {
      MutexLock lock(mu_);
      current_ = snapshot;
      subscribers = subscribers_;
    }
    for (auto& s : subscribers) s(snapshot);
  }

 private:
  mutable Mutex mu_;
  std::shared_ptr<const Snapshot> current_ GUARDED_BY(mu_);
  std::vector<Subscriber> subscribers_ GUARDED_BY(mu_);
};

}  // namespace rolter
