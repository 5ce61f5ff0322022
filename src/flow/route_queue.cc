#include "flow/route_queue.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "observe/metrics.h"
#include "observe/queue_metrics.h"

namespace rolter {

std::string_view shed_reason_name(ShedReason reason) {
  switch (reason) {
    case ShedReason::kFull:
      return "full";
    case ShedReason::kPredictedWait:
      return "predicted_wait";
    case ShedReason::kExpired:
      return "expired";
    case ShedReason::kMaxTtft:
      return "max_ttft";
  }
  return "full";
}

namespace {

uint32_t seconds_ceil(uint64_t ms) { return static_cast<uint32_t>((ms + 999) / 1000); }

}  // namespace

void RouteQueue::configure(std::shared_ptr<const FlowCapacity> capacity,
                           const QueueSettings& settings,
                           const std::shared_ptr<QueueSeries>& series) {
  Wakes wakes;
  {
    MutexLock lock(mu_);
    capacity_ = std::move(capacity);
    settings_ = settings;
    if (series) {
      if (const auto earlier = series_.lock(); earlier && earlier != series) series->adopt(*earlier);
    }
    series_ = series;
    queue_.set_max_requests(settings.max_requests);
    dispatch(clock_.now(), wakes);  // more room, perhaps
  }
  deliver(wakes);
}

QueueAdmission RouteQueue::enter(QueueTicket ticket, std::shared_ptr<QueueWaiter> waiter) {
  QueueAdmission admission;
  Wakes wakes;
  std::shared_ptr<PreemptTarget> victim;
  {
    MutexLock lock(mu_);
    const Clock::TimePoint now = clock_.now();
    const QueueRoom room = capacity_ ? capacity_->room(now) : QueueRoom{};
    // Nowhere to go at all (every candidate parked, open or down): the attempt loop gives its
    // own answer (the soonest back, or 503 naming why each is out); a queue would only delay it.
    if (!room.any_available) return admission;
    const uint8_t band = std::min<uint8_t>(ticket.band, kQueueBands - 1);
    const bool arrival_light = settings_.fair_reserve > 0 && light(band, ticket.tenant);
    if (arrival_light) light_seen_ = now;
    if (queue_.empty() && pending_ < room.free && (arrival_light || may_take(room.free, now))) {
      ++pending_;
      busy_.store(static_cast<uint32_t>(queue_.size()) + pending_, std::memory_order_release);
      return admission;  // kGo
    }
    const size_t ahead = queue_.ahead_of(band, ticket.tenant) + 1;
    // Admission by cost: its prefill alone would break its band's time to first token.
    if (const uint64_t max_ttft = settings_.max_ttft_ms[band];
        max_ttft > 0 && ticket.prefill_ms && *ticket.prefill_ms > static_cast<double>(max_ttft)) {
      return refused(ShedReason::kMaxTtft, band, ahead, now);
    }
    // Refused at once when the measured drain cannot reach it within max_wait_ms; only on a
    // reliable estimate, else the wait itself decides.
    if (const auto rate = drained_.rate(now); rate && rate->reliable &&
        expected_wait_ms(ahead, *rate) > static_cast<double>(settings_.max_wait_ms)) {
      return refused(ShedReason::kPredictedWait, band, ahead, now);
    }
    std::string tenant = ticket.tenant;
    FairQueue::PushResult pushed =
        queue_.push(QueueEntry{.band = band, .tenant = std::move(ticket.tenant), .cost = ticket.cost});
    if (!pushed.admitted) return refused(ShedReason::kFull, band, ahead, now);
    if (pushed.displaced) shed(*pushed.displaced, ShedReason::kFull, now, wakes);
    waiting_.emplace(pushed.id, Waiting{.waiter = std::move(waiter),
                                        .enqueued = now,
                                        .tenant = std::move(tenant),
                                        .band = band});
    admission.kind = QueueAdmission::Kind::kQueued;
    admission.id = pushed.id;
    publish(band);
    // Room may exist behind the ones already waiting (a slot freed a moment ago): it goes in the
    // queue's order, this request's turn included.
    dispatch(now, wakes);
    // Still waiting, in a band that preempts: a lower band's request that has not begun its
    // answer gives up its slot. (The slot then goes to the highest band waiting: this one's.)
    // (Or, with fair_preempt, a request of its band whose tenant holds well more than its own.)
    // The slot is reserved for this request: dispatched first once free.
    if (const auto still = waiting_.find(pushed.id); still != waiting_.end()) {
      if (settings_.preempt[band]) victim = displace_below(band);
      if (!victim && settings_.fair_preempt) {
        victim = displace_over_share(band, still->second.tenant);
      }
      if (victim) reserved_.push_back(pushed.id);
    }
  }
  deliver(wakes);
  if (victim) victim->stop();
  return admission;
}

QueueAdmission RouteQueue::refused(ShedReason reason, uint8_t band, size_t ahead,
                                   Clock::TimePoint now) {
  if (const auto m = series_.lock()) m->count_shed(band, shed_reason_name(reason));
  return QueueAdmission{.kind = QueueAdmission::Kind::kShed,
                        .reason = reason,
                        .retry_after_s = retry_after(ahead, now)};
}

bool RouteQueue::claim(std::map<uint64_t, Running>::iterator it) {
  if (!it->second.target->claim()) return false;  // its answer has begun
  if (const auto m = series_.lock()) m->count_preemption(it->second.band);
  return true;
}

std::shared_ptr<PreemptTarget> RouteQueue::displace_below(uint8_t band) {
  for (uint8_t lower = 0; lower < band; ++lower) {
    // The most recently dispatched of the band first: it has had the least of its slot.
    for (auto it = running_.rbegin(); it != running_.rend(); ++it) {
      if (it->second.band != lower || !it->second.target->open()) continue;
      if (claim(std::prev(it.base()))) return it->second.target;
    }
  }
  return nullptr;
}

std::shared_ptr<PreemptTarget> RouteQueue::displace_over_share(uint8_t band,
                                                              const std::string& tenant) {
  const uint32_t mine = held(band, tenant);
  // The tenant holding the most (at least two more than this one), its most recent request first.
  std::map<uint64_t, Running>::iterator best = running_.end();
  uint32_t best_held = mine + 1;
  for (auto it = running_.begin(); it != running_.end(); ++it) {
    const Running& r = it->second;
    if (r.band != band || r.tenant == tenant || !r.target->open()) continue;
    if (const uint32_t h = held(band, r.tenant); h >= best_held) {
      best = it;
      best_held = h;
    }
  }
  if (best == running_.end() || !claim(best)) return nullptr;
  return best->second.target;
}

uint32_t RouteQueue::held(uint8_t band, std::string_view tenant) const {
  const auto it = held_.find(std::make_pair(band, std::string(tenant)));
  return it == held_.end() ? 0u : it->second;
}

bool RouteQueue::light(uint8_t band, std::string_view tenant) const {
  const uint32_t mine = held(band, tenant);
  for (auto it = held_.lower_bound(std::make_pair(band, std::string()));
       it != held_.end() && it->first.first == band; ++it) {
    if (it->second >= mine + 2) return true;
  }
  return false;
}

bool RouteQueue::reserving(Clock::TimePoint now) const {
  return settings_.fair_reserve > 0 && light_seen_ && now - *light_seen_ < kReserveWindow;
}

bool RouteQueue::may_take(uint32_t free, Clock::TimePoint now) const {
  return pending_ + settings_.fair_reserve < free || !reserving(now);
}

uint64_t RouteQueue::register_running(uint8_t band, std::string_view tenant,
                                      std::shared_ptr<PreemptTarget> target) {
  MutexLock lock(mu_);
  const uint64_t id = next_running_++;
  running_.emplace(id, Running{.band = band, .tenant = std::string(tenant), .target = std::move(target)});
  ++held_[std::make_pair(band, std::string(tenant))];
  return id;
}

void RouteQueue::unregister(uint64_t id) {
  MutexLock lock(mu_);
  const auto it = running_.find(id);
  if (it == running_.end()) return;
  const auto h = held_.find(std::make_pair(it->second.band, it->second.tenant));
  if (h != held_.end() && --h->second == 0) held_.erase(h);
  running_.erase(it);
}

bool RouteQueue::registers(uint8_t band) const {
  MutexLock lock(mu_);
  if (settings_.fair_preempt || settings_.fair_reserve > 0) return true;
  for (uint8_t b = band + 1; b < kQueueBands; ++b) {
    if (settings_.preempt[b]) return true;
  }
  return false;
}

bool RouteQueue::leave(uint64_t id) {
  MutexLock lock(mu_);
  const std::optional<QueueEntry> entry = queue_.remove(id);
  if (!entry) return false;
  waiting_.erase(id);
  busy_.store(static_cast<uint32_t>(queue_.size()) + pending_, std::memory_order_release);
  publish(entry->band);
  return true;
}

std::optional<uint32_t> RouteQueue::expire(uint64_t id) {
  MutexLock lock(mu_);
  const std::optional<QueueEntry> entry = queue_.remove(id);
  if (!entry) return std::nullopt;
  waiting_.erase(id);
  busy_.store(static_cast<uint32_t>(queue_.size()) + pending_, std::memory_order_release);
  publish(entry->band);
  if (const auto m = series_.lock()) m->count_shed(entry->band, shed_reason_name(ShedReason::kExpired));
  return retry_after(queue_.ahead_of(entry->band, entry->tenant) + 1, clock_.now());
}

void RouteQueue::started() {
  MutexLock lock(mu_);
  if (pending_ > 0) --pending_;
  busy_.store(static_cast<uint32_t>(queue_.size()) + pending_, std::memory_order_release);
}

void RouteQueue::released(bool completed) {
  if (completed) drained_.record(clock_.now());
  if (!busy()) return;
  Wakes wakes;
  {
    MutexLock lock(mu_);
    dispatch(clock_.now(), wakes);
  }
  deliver(wakes);
}

void RouteQueue::poke() {
  if (!busy()) return;
  const int64_t now_ticks = clock_.now().time_since_epoch().count();
  int64_t last = last_poke_.load(std::memory_order_relaxed);
  const int64_t interval =
      std::chrono::duration_cast<Clock::Duration>(kPokeInterval).count();
  if (now_ticks - last < interval) return;
  if (!last_poke_.compare_exchange_strong(last, now_ticks, std::memory_order_relaxed)) return;
  Wakes wakes;
  {
    MutexLock lock(mu_);
    dispatch(clock_.now(), wakes);
  }
  deliver(wakes);
}

size_t RouteQueue::depth() const {
  MutexLock lock(mu_);
  return queue_.size();
}

void RouteQueue::dispatch(Clock::TimePoint now, Wakes& wakes) {
  if (queue_.empty() || !capacity_) return;
  const QueueRoom room = capacity_->room(now);
  // Nowhere to go at all any more (every candidate parked, open or down): the waiting requests
  // leave for the attempt loop, whose answer (the soonest back, or 503 naming why each is out)
  // a longer wait would only delay.
  const bool none_available = !room.any_available;
  std::array<bool, kQueueBands> touched{};
  while (!queue_.empty() && (none_available || pending_ < room.free)) {
    // A request a displacement freed a slot for goes first; else the queue's order, or in the
    // last free slots while fair_reserve keeps them, the first light tenant's.
    std::optional<QueueEntry> entry;
    while (!entry && !reserved_.empty()) {
      entry = queue_.remove(reserved_.front());
      reserved_.erase(reserved_.begin());
    }
    if (!entry && !none_available && pending_ + settings_.fair_reserve >= room.free &&
        reserving(now)) {
      // (The predicate runs within pop_first, under this lock, which the analysis cannot see.)
      entry = queue_.pop_first([&](uint8_t band, std::string_view tenant)
                                   NO_THREAD_SAFETY_ANALYSIS { return light(band, tenant); });
      if (!entry) break;  // none may take them: they stay free
    }
    if (!entry) entry = queue_.pop();
    auto it = waiting_.find(entry->id);
    touched[entry->band] = true;
    if (it == waiting_.end()) continue;  // never: every queued entry has its waiter
    ++pending_;
    if (const auto m = series_.lock()) {
      m->observe_wait(std::chrono::duration<double>(now - it->second.enqueued).count());
      if (settings_.per_tenant_metrics) m->count_dispatch(it->second.tenant);
    }
    wakes.push_back(Wake{.waiter = std::move(it->second.waiter), .verdict = QueueVerdict{}});
    waiting_.erase(it);
  }
  busy_.store(static_cast<uint32_t>(queue_.size()) + pending_, std::memory_order_release);
  for (uint8_t b = 0; b < kQueueBands; ++b) {
    if (touched[b]) publish(b);
  }
}

void RouteQueue::shed(const QueueEntry& entry, ShedReason reason, Clock::TimePoint now,
                      Wakes& wakes) {
  auto it = waiting_.find(entry.id);
  if (const auto m = series_.lock()) m->count_shed(entry.band, shed_reason_name(reason));
  publish(entry.band);
  if (it == waiting_.end()) return;
  wakes.push_back(Wake{.waiter = std::move(it->second.waiter),
                       .verdict = QueueVerdict{.kind = QueueVerdict::Kind::kShed,
                                               .reason = reason,
                                               .retry_after_s = retry_after(
                                                   queue_.ahead_of(entry.band, entry.tenant) + 1,
                                                   now)}});
  waiting_.erase(it);
}

uint32_t RouteQueue::retry_after(size_t ahead, Clock::TimePoint now) const {
  return retry_after_seconds(ahead, drained_.rate(now), seconds_ceil(settings_.max_wait_ms));
}

void RouteQueue::publish(uint8_t band) {
  if (const auto m = series_.lock()) m->set_depth(band, static_cast<double>(queue_.band_size(band)));
}

void RouteQueue::deliver(Wakes& wakes) {
  for (Wake& wake : wakes) wake.waiter->wake(wake.verdict);
}

FlowQueues::FlowQueues(const Clock& clock) : clock_(clock) {}
FlowQueues::~FlowQueues() = default;

RouteQueue& FlowQueues::route(std::string_view name) {
  MutexLock lock(mu_);
  auto it = queues_.find(std::string(name));
  if (it != queues_.end()) return *it->second;
  auto queue = std::make_unique<RouteQueue>(std::string(name), clock_);
  RouteQueue& ref = *queue;
  queues_.emplace(std::string(name), std::move(queue));
  return ref;
}

QueueMetrics* FlowQueues::metrics(Metrics* metrics) {
  if (metrics == nullptr) return nullptr;
  MutexLock lock(mu_);
  if (!metrics_) {
    metrics_ = std::make_unique<QueueMetrics>(metrics->registry(), metrics->series_table());
  }
  return metrics_.get();
}

}  // namespace rolter
