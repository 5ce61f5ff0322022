// RouteQueue: where requests to a saturated route wait, and who goes next (SPEC §19).
//
// One per route (or group, or provider pin) that can saturate, kept by FlowQueues for the life of
// the process: like the LoadTracker's state it lives outside every snapshot, and each snapshot
// only reconfigures it (its capacity view and bounds). It holds a FairQueue (bands, deficit
// round-robin in cost, shedding order) and a DrainMeter (the measured completion rate), and it
// grants a waiting request its turn the moment the route has room: when a request of the route
// ends (released()) or when anything else may have freed a slot (poke(): a request of another
// route on a shared instance, an engine scrape). The strategy picks at dispatch time: a grant only
// says "go now"; the granted request runs the ordinary attempt loop with the state of that moment.
//
// Waiting itself happens outside: a QueueWaiter (proxy/queue_gate.h: an Asio timer on the
// request's worker) is told its verdict through wake(), once, from whichever thread decided it.
//
//   switch (queue.enter(ticket, waiter).kind) {
//     case kGo:     queue.started(); forward now
//     case kShed:   answer 429 with admission.retry_after_s
//     case kQueued: wait for waiter->wake(); on kDispatch queue.started(); forward
//   }
//   ... when a request of the route ends: queue.released();
//
// Preemption: a request of a band with `preempt` that must wait claims one registered running
// request of a lower band whose answer has not begun (flow/preemption.h) and stops it; that
// request frees its slot (released(false)) without answering, and enters the queue again.
// With fair_reserve, the route's last free slots are kept for light tenants (QueueSettings), at
// enter() and at dispatch alike.
//
// Nothing is shed while any candidate has room: enter() queues only when the route has no free
// slot or others already wait (so that a newcomer cannot overtake them), and dispatches at once
// whatever fits. A grant is counted as pending until started(), so room is not granted twice.
// Beyond that point a request is refused at once (kShed) when its band's max_ttft_ms is below
// its estimated prefill (admission by cost), when the measured drain cannot reach it within
// max_wait_ms, or when the queue is full and it is the one to shed.
//
// Thread-safety: every method may be called from any thread; state is under one mutex, and wake()
// is always called without it. busy() reads one atomic.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "common/mutex.h"
#include "flow/drain_meter.h"
#include "flow/fair_queue.h"
#include "flow/preemption.h"

namespace rolter {

class Metrics;
class QueueMetrics;
class QueueSeries;

// How much more a route can take now. Implemented over the fleet's instances
// (fleet/instance_capacity.h); tests give fixed numbers.
struct QueueRoom {
  uint32_t free = 0;           // slots that can take a request now, summed over candidates
  bool any_available = false;  // some candidate can take traffic at all (not parked, open, down)
};

class FlowCapacity {
 public:
  virtual ~FlowCapacity() = default;
  // REQUIRES (both): callable from any thread; no locks, no allocation.
  virtual QueueRoom room(Clock::TimePoint now) const = 0;
  // Whether candidate i (in the route's candidate order) can take a request now.
  virtual bool has_room(size_t i, Clock::TimePoint now) const = 0;
};

enum class ShedReason : uint8_t { kFull = 0, kPredictedWait, kExpired, kMaxTtft };
inline constexpr size_t kShedReasons = 4;
// "full", "predicted_wait", "expired", "max_ttft": the reason label of rolter_shed_total.
std::string_view shed_reason_name(ShedReason reason);

struct QueueVerdict {
  enum class Kind : uint8_t { kDispatch, kShed } kind = Kind::kDispatch;
  ShedReason reason = ShedReason::kFull;
  uint32_t retry_after_s = 1;
};

class QueueWaiter {
 public:
  virtual ~QueueWaiter() = default;
  // The request's verdict: called exactly once per queued request that is not removed by
  // leave() or expire() first, from any thread, never under the queue's lock.
  virtual void wake(const QueueVerdict& verdict) = 0;
};

struct QueueTicket {
  uint8_t band = 4;
  std::string tenant;  // the key's team, else the key's name; "" on an open gateway
  uint64_t cost = 1;   // uncached prompt tokens + output cap
  // Its prefill alone, estimated in ms (the fastest candidate's learned time to first token for
  // its uncached prompt, unqueued), when its band has a max_ttft_ms and a candidate has a model.
  std::optional<double> prefill_ms;
};

struct QueueAdmission {
  enum class Kind : uint8_t { kGo, kQueued, kShed } kind = Kind::kGo;
  uint64_t id = 0;             // kQueued: for leave() and expire()
  ShedReason reason = ShedReason::kFull;  // kShed
  uint32_t retry_after_s = 1;  // kShed
};

struct QueueSettings {
  size_t max_requests = 1024;
  uint64_t max_wait_ms = 30000;
  // Per band: while the route is saturated, a request whose estimated prefill exceeds this is
  // refused at once (admission by cost); 0 = no such refusal.
  std::array<uint64_t, kQueueBands> max_ttft_ms{};
  // Per band: a request of it that must wait displaces a lower band's dispatched request whose
  // answer has not begun (the lowest band first, the most recently dispatched within it).
  std::array<bool, kQueueBands> preempt{};
  // Within a band: a request that must wait displaces a request not yet answering of the tenant
  // that holds the most of the band's running requests, when that is at least two more than its
  // own tenant holds (the most recently dispatched of that tenant's).
  bool fair_preempt = false;
  // Within a band: the route's last `fair_reserve` free slots go only to a light tenant (one
  // holding at least two fewer running requests than the band's heaviest), for kReserveWindow
  // after a light tenant last arrived. The flood's tenant cannot fill them, so a light tenant's
  // request finds one free at once instead of waiting for the next to end; outside that window
  // anyone may take them.
  uint32_t fair_reserve = 0;
  bool per_tenant_metrics = false;  // rolter_queue_dispatches_total ([metrics] per_key)
};

class RouteQueue {
 public:
  // `clock` must outlive the queue.
  RouteQueue(std::string route, const Clock& clock) : route_(std::move(route)), clock_(clock) {}
  RouteQueue(const RouteQueue&) = delete;
  RouteQueue& operator=(const RouteQueue&) = delete;

  // A snapshot's view of the route: its capacity, bounds and series (null: no metrics), which the
  // snapshot's gate holds; the queue writes to them while some gate still does, and they adopt
  // the series of the view before. A request already queued keeps its place.
  void configure(std::shared_ptr<const FlowCapacity> capacity, const QueueSettings& settings,
                 const std::shared_ptr<QueueSeries>& series) EXCLUDES(mu_);

  // True while requests wait or hold grants not yet started: a new request must then enter() and
  // take its turn. One atomic load: the unsaturated path reads this and the capacity, nothing more.
  bool busy() const { return busy_.load(std::memory_order_acquire) > 0; }

  // A request that found the route saturated (or busy). kGo and a later kDispatch each hold a
  // grant: call started() once the request is on its way (or abandoned).
  QueueAdmission enter(QueueTicket ticket, std::shared_ptr<QueueWaiter> waiter) EXCLUDES(mu_);

  // The request `id` left before its turn (its client went away): removed, true. False when it
  // was already woken (its wake() is on its way).
  bool leave(uint64_t id) EXCLUDES(mu_);
  // The request `id` waited max_wait_ms: removed and counted as shed (expired); its Retry-After.
  // nullopt when it was already woken.
  std::optional<uint32_t> expire(uint64_t id) EXCLUDES(mu_);

  // A granted request took its slot (or gave up its grant).
  void started() EXCLUDES(mu_);
  // A request of this route ended: the drain rate learns from it (unless it did not complete: it
  // was displaced and waits again), and waiting requests that now fit are dispatched. Without
  // waiting requests: no lock, no allocation.
  void released(bool completed = true) EXCLUDES(mu_);

  // Preemption (SPEC §19): a dispatched request of `band` and `tenant` that a higher band with
  // `preempt` (or, with fair_preempt, a tenant of its band holding fewer running requests) may
  // displace until its answer begins. Returns the id for unregister(); call it when the request
  // ends. Only worth registering when may_be_displaced().
  uint64_t register_running(uint8_t band, std::string_view tenant,
                            std::shared_ptr<PreemptTarget> target) EXCLUDES(mu_);
  void unregister(uint64_t id) EXCLUDES(mu_);
  // Whether a request of `band` is registered while it runs: it may be displaced (a band above
  // it has `preempt`, or fair_preempt), or fair_reserve counts what each tenant holds.
  bool registers(uint8_t band) const EXCLUDES(mu_);
  // A slot may have freed elsewhere: dispatch what fits. Cheap when nothing waits, and at most
  // one real check per kPokeInterval.
  void poke() EXCLUDES(mu_);

  // For tests and the dashboard.
  size_t depth() const EXCLUDES(mu_);
  const std::string& route() const { return route_; }

  // 20 ms: well under a request's service time, so a slot freed elsewhere idles little.
  static constexpr std::chrono::milliseconds kPokeInterval{20};
  // fair_reserve holds its slots this long after a light tenant's last arrival: a tenant that
  // sends at least once a second finds them kept.
  static constexpr std::chrono::seconds kReserveWindow{1};

 private:
  struct Waiting {
    std::shared_ptr<QueueWaiter> waiter;
    Clock::TimePoint enqueued;
    std::string tenant;
    uint8_t band;
  };
  struct Wake {
    std::shared_ptr<QueueWaiter> waiter;
    QueueVerdict verdict;
  };
  struct Running {
    uint8_t band;
    std::string tenant;
    std::shared_ptr<PreemptTarget> target;
  };
  using Wakes = std::vector<Wake>;

  // Grants the turn to every waiting request that fits now.
  void dispatch(Clock::TimePoint now, Wakes& wakes) REQUIRES(mu_);
  // A refusal at enter(), counted: `ahead` requests would have gone before it.
  QueueAdmission refused(ShedReason reason, uint8_t band, size_t ahead, Clock::TimePoint now)
      REQUIRES(mu_);
  // The running request a waiting one of `band` displaces, claimed; null when none may be.
  std::shared_ptr<PreemptTarget> displace_below(uint8_t band) REQUIRES(mu_);
  // With fair_preempt: the running request a waiting one of `band` and `tenant` displaces within
  // its band, claimed; null when none may be.
  std::shared_ptr<PreemptTarget> displace_over_share(uint8_t band, const std::string& tenant)
      REQUIRES(mu_);
  // The registered requests `tenant` holds in `band`.
  uint32_t held(uint8_t band, std::string_view tenant) const REQUIRES(mu_);
  // Whether `tenant` holds at least two fewer registered requests in `band` than the band's
  // heaviest tenant.
  bool light(uint8_t band, std::string_view tenant) const REQUIRES(mu_);
  // Whether fair_reserve keeps the last free slots from all but light tenants now.
  bool reserving(Clock::TimePoint now) const REQUIRES(mu_);
  // Whether any tenant, light or not, may take one of `free` slots, with the grants pending:
  // beyond the reserve, or no reserve held now.
  bool may_take(uint32_t free, Clock::TimePoint now) const REQUIRES(mu_);
  // Claims the registered request `it` for a displacement; false when its answer has begun.
  bool claim(std::map<uint64_t, Running>::iterator it) REQUIRES(mu_);
  void shed(const QueueEntry& entry, ShedReason reason, Clock::TimePoint now, Wakes& wakes)
      REQUIRES(mu_);
  uint32_t retry_after(size_t ahead, Clock::TimePoint now) const REQUIRES(mu_);
  void publish(uint8_t band) REQUIRES(mu_);
  static void deliver(Wakes& wakes);

  const std::string route_;
  const Clock& clock_;
  mutable Mutex mu_;
  std::shared_ptr<const FlowCapacity> capacity_ GUARDED_BY(mu_);
  QueueSettings settings_ GUARDED_BY(mu_);
  std::weak_ptr<QueueSeries> series_ GUARDED_BY(mu_);
  FairQueue queue_ GUARDED_BY(mu_){1024};
  DrainMeter drained_;  // lock-free: every request of the route records its end
  std::unordered_map<uint64_t, Waiting> waiting_ GUARDED_BY(mu_);
  uint32_t pending_ GUARDED_BY(mu_) = 0;  // grants not yet started
  // Dispatched requests registered as displaceable, by registration order (ids ascending), until
  // they end; a claimed one stays until then, its target no longer open.
  std::map<uint64_t, Running> running_ GUARDED_BY(mu_);
  // How many registered requests each tenant holds per band (fair_preempt's shares).
  std::map<std::pair<uint8_t, std::string>, uint32_t, std::less<>> held_ GUARDED_BY(mu_);
  uint64_t next_running_ GUARDED_BY(mu_) = 1;
  // Waiting requests a displacement freed a slot for: dispatched first, in order.
  std::vector<uint64_t> reserved_ GUARDED_BY(mu_);
  // When a light tenant last arrived (fair_reserve).
  std::optional<Clock::TimePoint> light_seen_ GUARDED_BY(mu_);
  std::atomic<uint32_t> busy_{0};          // queue size + pending grants
  std::atomic<int64_t> last_poke_{0};      // clock ticks
};

// Every route's queue, by name, for the life of the process (owned by the LoadTracker).
//
// Thread-safety: route() takes a mutex; it is called while building snapshots. Queues are never
// destroyed, so the pointers snapshots keep stay valid.
class FlowQueues {
 public:
  explicit FlowQueues(const Clock& clock = default_clock());
  ~FlowQueues();

  RouteQueue& route(std::string_view name) EXCLUDES(mu_);
  // The flow-control series, made on `metrics`' registry once for the process; null when
  // `metrics` is. REQUIRES: always the same Metrics (there is one per process).
  QueueMetrics* metrics(Metrics* metrics) EXCLUDES(mu_);

  // Calls fn(RouteQueue&) for every queue (the dashboard, pokes).
  template <typename Fn>
  void for_each(Fn&& fn) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    for (auto& [name, queue] : queues_) fn(*queue);
  }

 private:
  const Clock& clock_;
  Mutex mu_;
  std::unordered_map<std::string, std::unique_ptr<RouteQueue>> queues_ GUARDED_BY(mu_);
  std::unique_ptr<QueueMetrics> metrics_ GUARDED_BY(mu_);
};

}  // namespace rolter
