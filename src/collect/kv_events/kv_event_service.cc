#include "collect/kv_events/kv_event_service.h"

#include <spdlog/spdlog.h>
#include <boost/asio/steady_timer.hpp>
#include <zmq.hpp>

#include <map>
#include <string>

#include "collect/kv_events/kv_streams_wanted.h"
#include "collect/kv_events/kv_subscriber.h"
#include "collect/loop/background_loop.h"
#include "collect/loop/snapshot_changes.h"
#include "common/mutex.h"
#include "fleet/load_tracker.h"
#include "observe/metrics.h"
#include "snapshot/snapshot_store.h"

namespace rolter {
namespace {

// How often the service's loop looks at the snapshot and copies the streams' state into the
// metrics: a reload that adds an instance is followed within this, and a scrape is at most this
// late with a state change.
constexpr std::chrono::milliseconds kTick{200};

Metrics::KvEventCounts counts_of(const KvResidency& kv) {
  return {.state = static_cast<uint8_t>(kv.state.load(std::memory_order_relaxed)),
          .events = kv.events.load(std::memory_order_relaxed),
          .gaps = kv.gaps.load(std::memory_order_relaxed),
          .decode_errors = kv.decode_errors.load(std::memory_order_relaxed)};
}

}  // namespace

struct KvEventService::Impl {
  struct Subscription {
    KvEventsConfig config;
    std::unique_ptr<KvSubscriber> subscriber;
    std::optional<Metrics::KvEventInstruments> instruments;
    SeriesLease series;  // what `instruments` point to
  };

  Impl(SnapshotStore& store, const Clock& c) : clock(c), changes(store) {}

  const Clock& clock;
  zmq::context_t context{1};  // before the subscriptions: their sockets close first
  SnapshotChanges changes;
  mutable Mutex mu;
  // Written by the loop; read by subscribed() from any thread.
  std::map<InstanceState*, Subscription> subscriptions GUARDED_BY(mu);
  BackgroundLoop background;  // last: its pending work goes before what it uses

  Task<void> run();
  void refresh();
  void subscribe(InstanceState& state, const KvEventsConfig& config, Metrics* metrics);
  void unsubscribe(InstanceState& state, Subscription& subscription);
  void sync_metrics();
  void stop_all();
};

void KvEventService::Impl::subscribe(InstanceState& state, const KvEventsConfig& config,
                                     Metrics* metrics) {
  state.kv.block_size.store(config.block_size, std::memory_order_relaxed);
  state.kv.index.set_max_blocks(config.max_blocks);
  state.kv.subscribed.store(true, std::memory_order_release);
  auto subscriber = std::make_unique<KvSubscriber>(
      context, state.kv, clock,
      KvSubscriberOptions{.endpoint = config.endpoint,
                          .replay_endpoint = config.replay_endpoint,
                          .topic = config.topic,
                          .block_size = config.block_size,
                          .stale_after = std::chrono::seconds(config.stale_secs),
                          .name = state.identity});
  subscriber->start();
  Subscription subscription{.config = config, .subscriber = std::move(subscriber)};
  if (metrics != nullptr) {
    subscription.instruments = metrics->kv_events(state.identity, subscription.series);
  }
  MutexLock lock(mu);
  subscriptions.insert_or_assign(&state, std::move(subscription));
}

void KvEventService::Impl::unsubscribe(InstanceState& state, Subscription& subscription) {
  subscription.subscriber->stop();
  KvResidency& kv = state.kv;
  kv.subscribed.store(false, std::memory_order_release);
  kv.state.store(KvStreamState::kDisconnected, std::memory_order_release);
  if (subscription.instruments) {
    Metrics::sync_kv_events(*subscription.instruments, counts_of(kv));
  }
}

void KvEventService::Impl::refresh() {
  auto next = changes.next();
  if (!next) return;
  const std::shared_ptr<const Snapshot>& snapshot = *next;
  const KvStreamsWanted wanted = snapshot ? kv_streams_wanted(*snapshot) : KvStreamsWanted{};
  std::vector<std::pair<InstanceState*, Subscription>> leaving;
  std::vector<std::pair<InstanceState*, KvEventsConfig>> joining;
  {
    MutexLock lock(mu);
    for (auto it = subscriptions.begin(); it != subscriptions.end();) {
      auto want = wanted.find(it->first);
      if (want != wanted.end() && same_kv_events_config(want->second, it->second.config)) {
        ++it;
        continue;
      }
      leaving.emplace_back(it->first, std::move(it->second));
      it = subscriptions.erase(it);
    }
    for (const auto& [state, config] : wanted) {
      if (subscriptions.count(state) == 0) joining.emplace_back(state, config);
    }
  }
  for (auto& [state, subscription] : leaving) {
    spdlog::info("kv events: {}: {}", state->identity,
                 wanted.count(state) ? "kv_events changed; resubscribing" : "no longer subscribed");
    unsubscribe(*state, subscription);
  }
  for (const auto& [state, config] : joining) subscribe(*state, config, snapshot->metrics());
}

void KvEventService::Impl::sync_metrics() {
  MutexLock lock(mu);
  for (const auto& [state, subscription] : subscriptions) {
    if (!subscription.instruments) continue;
    Metrics::sync_kv_events(*subscription.instruments, counts_of(state->kv));
  }
}

Task<void> KvEventService::Impl::run() {
  asio::steady_timer timer(background.io());
  for (;;) {
    refresh();
    sync_metrics();
    timer.expires_after(kTick);
    auto [ec] = co_await timer.async_wait(kNoThrow);
    if (ec) co_return;
  }
}

void KvEventService::Impl::stop_all() {
  std::map<InstanceState*, Subscription> all;
  {
    MutexLock lock(mu);
    all = std::move(subscriptions);
    subscriptions.clear();
  }
  for (auto& [state, subscription] : all) unsubscribe(*state, subscription);
  changes.reset();
}

KvEventService::KvEventService(SnapshotStore& store, const Clock& clock)
    : impl_(std::make_unique<Impl>(store, clock)) {}

KvEventService::~KvEventService() { stop(); }

void KvEventService::start() {
  impl_->background.start([impl = impl_.get()] { return impl->run(); });
}

void KvEventService::stop() {
  if (!impl_->background.running()) return;
  impl_->background.stop();
  impl_->stop_all();
}

size_t KvEventService::subscribed() const {
  MutexLock lock(impl_->mu);
  return impl_->subscriptions.size();
}

}  // namespace rolter
