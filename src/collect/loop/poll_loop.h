// PollLoop: the loop every periodic poller runs on its BackgroundLoop. Each turn it follows the
// snapshot (rebuilding its targets once per published snapshot), tells each target whether its
// answer went stale, starts the polls that are due, and sleeps until the next may be: the shortest
// interval, at most `max_tick` so a reload that adds a target is noticed soon.
//
// A Service says what to poll and what an answer means:
//   struct Service {
//     struct Target { auto& polled(); ... };  // polled(): due() begin() check_stale() retire()
//                                              //           timing().interval
//     struct Wanted { ... };                   // what one snapshot asks of a target
//     std::map<std::string, Wanted> wanted(const Snapshot&);   // by a key (a URL, an instance)
//     std::shared_ptr<Target> make(const std::string& key, const Wanted&);  // a new target
//     void update(Target&, Wanted&, const Snapshot&);          // each snapshot, new or not
//     void forget(const std::string& key, Target&);            // before it is retired
//     void stale(const std::string& key, Target&);             // its answer went stale
//     Task<void> poll(std::shared_ptr<Target>);                // one poll, begun; its outcome
//   };
//
// Include only from .cc files: it pulls in Asio's timers.
//
// Thread-safety: the loop's thread only.
#pragma once

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "collect/loop/snapshot_changes.h"

namespace rolter {

template <typename Service>
class PollLoop {
 public:
  using Target = typename Service::Target;
  using Targets = std::map<std::string, std::shared_ptr<Target>>;

  // `store` and `service` must outlive the loop.
  PollLoop(const SnapshotStore& store, Service& service, std::chrono::milliseconds max_tick)
      : changes_(store), service_(service), max_tick_(max_tick) {}

  Task<void> run(asio::io_context& io) {
    asio::steady_timer timer(io);
    for (;;) {
      if (auto snapshot = changes_.next()) reconcile(snapshot->get());
      for (const auto& [key, target] : targets_) {
        auto& polled = target->polled();
        if (polled.check_stale()) service_.stale(key, *target);
        if (polled.due()) {
          polled.begin();  // here, not in the coroutine: it is due no more from now on
          asio::co_spawn(io, service_.poll(target), asio::detached);
        }
      }
      timer.expires_after(tick());
      auto [ec] = co_await timer.async_wait(kNoThrow);
      if (ec) co_return;
    }
  }

  // Retires every target; the next turn would rebuild them from the current snapshot.
  void retire_all() {
    for (auto& [key, target] : targets_) target->polled().retire();
    targets_.clear();
    changes_.reset();
  }

  const Targets& targets() const { return targets_; }

 private:
  void reconcile(const Snapshot* snapshot) {
    auto wanted = snapshot != nullptr ? service_.wanted(*snapshot)
                                      : decltype(service_.wanted(*snapshot)){};
    for (auto it = targets_.begin(); it != targets_.end();) {
      if (wanted.count(it->first) == 0) {
        service_.forget(it->first, *it->second);
        it->second->polled().retire();
        it = targets_.erase(it);
      } else {
        ++it;
      }
    }
    for (auto& [key, w] : wanted) {
      auto& target = targets_[key];
      if (!target) target = service_.make(key, w);
      service_.update(*target, w, *snapshot);
    }
  }

  std::chrono::milliseconds tick() const {
    Clock::Duration shortest = max_tick_;
    for (const auto& [key, target] : targets_) {
      shortest = std::min(shortest, target->polled().timing().interval);
    }
    return std::max(std::chrono::milliseconds(1),
                    std::chrono::duration_cast<std::chrono::milliseconds>(shortest));
  }

  SnapshotChanges changes_;
  Service& service_;
  const std::chrono::milliseconds max_tick_;
  Targets targets_;
};

}  // namespace rolter
