// LoadTracker: the fleet's learned evidence, which outlives config reloads (SPEC §5).
//
// Keyed by stable instance identity (provider name + base_url). Snapshots hold raw pointers to
// InstanceState; states are never destroyed while the tracker lives, so a pointer taken by any
// snapshot stays valid across reloads. Per instance it keeps the load signals (local in-flight and
// engine-reported load), the learned latency evidence, availability (parking, breaker, health) and
// the KV residency read from its KV-event stream. Per `adaptive` route, keyed by route name, it
// keeps the route's AdaptiveRouteState (served count, picks by decision kind), which outlives
// reloads the same way.
//
// It is also the FleetView (observe/fleet_view.h) that Metrics reads at scrape time.
//
// Thread-safety: instance() and adaptive_route() take a mutex and are called only while building
// a snapshot (and by scrapes). The InstanceState fields are atomics, read and written by worker
// threads without locks.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

#include "balance/adaptive/adaptive_route_state.h"
#include "balance/evidence/instance_evidence.h"
#include "balance/lmcache_signal.h"
#include "balance/loads.h"
#include "balance/prefix/prefix_sharing.h"
#include "common/mutex.h"
#include "fleet/availability.h"
#include "flow/route_queue.h"
#include "kv/kv_residency.h"
#include "limits/local_limiter.h"
#include "observe/fleet_view.h"

namespace rolter {

struct InstanceState {
  explicit InstanceState(std::string identity_in, uint32_t id_in)
      : identity(std::move(identity_in)), id(id_in) {}

  const std::string identity;  // "<provider>@<base_url>"
  const uint32_t id;           // dense, stable for the process: indexes per-worker pools
  LoadSignals load;
  InstanceEvidence evidence;
  // What the instance's KV-event stream says its cache holds (SPEC §6.8); written only by its
  // subscriber (collect/kv_events/).
  KvResidency kv;
  // Whether the instance can take traffic: parking, circuit breaker, active health (SPEC §8).
  // Read and updated through fleet/availability.h.
  InstanceHealth health;
  // The instance's LMCache occupancy, from its lmcache.endpoint (collect/lmcache/lmcache_poller.h).
  LmcacheSignal lmcache;
};

class LoadTracker final : public FleetView {
 public:
  LoadTracker() = default;
  LoadTracker(const LoadTracker&) = delete;
  LoadTracker& operator=(const LoadTracker&) = delete;

  // Returns the state for (provider, base_url), creating it on first use.
  InstanceState& instance(std::string_view provider, std::string_view base_url) EXCLUDES(mu_);

  // Number of instances ever seen (ids are < size()).
  size_t size() const EXCLUDES(mu_);

  // Returns the adaptive state of the route (or group address) named `route`, creating it on
  // first use. Never destroyed while the tracker lives.
  AdaptiveRouteState& adaptive_route(std::string_view route) EXCLUDES(mu_);

  // Calls fn(const AdaptiveRouteState&) for every adaptive route ever seen, under the tracker's
  // lock (for scrapes).
  template <typename Fn>
  void for_each_adaptive_route(Fn&& fn) const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    for (const auto& state : adaptive_routes_) fn(state);
  }

  // Where the prefix trees of this node's balancers meet the other gateway nodes' (SPEC §6.17):
  // it outlives reloads, as the trees' names do.
  PrefixSharing& prefix_sharing() { return prefix_sharing_; }

  // The counters of every key's and team's limits (SPEC §15, the local backend): like the
  // instances' state, they outlive reloads, so a snapshot's rules point at cells kept here.
  LocalLimiter& limits() { return limits_; }

  // Every route's flow-control queue (SPEC §19): like the instances' state, it outlives reloads,
  // so requests waiting in it keep their place when a snapshot is replaced.
  FlowQueues& flow() { return flow_; }

  // Calls fn(const InstanceState&) for every instance, under the tracker's lock (for scrapes).
  template <typename Fn>
  void for_each(Fn&& fn) const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    for (const auto& state : states_) fn(state);
  }

  // FleetView: every instance's gauges (parked at the default clock's now), and every adaptive
  // route's picks by decision, its targets' summed over their instances.
  void for_each_instance(FunctionRef<void(const InstanceReading&)> fn) const override;
  void for_each_adaptive_picks(FunctionRef<void(const AdaptivePicksReading&)> fn) const override;

 private:
  mutable Mutex mu_;
  std::deque<InstanceState> states_ GUARDED_BY(mu_);  // deque: stable addresses
  std::unordered_map<std::string, InstanceState*> by_identity_ GUARDED_BY(mu_);
  std::deque<AdaptiveRouteState> adaptive_routes_ GUARDED_BY(mu_);  // deque: stable addresses
  PrefixSharing prefix_sharing_;
  LocalLimiter limits_;
  FlowQueues flow_;
};

// Counts one request's uncached prompt tokens in the instance's queued prefill work
// (LoadSignals::prefill_tokens) until its first token: release() then, or at destruction at the
// latest (an attempt that failed, or an answer that was not streamed).
class PrefillTicket {
 public:
  PrefillTicket(InstanceState& state, uint64_t tokens) : state_(&state), tokens_(tokens) {
    state_->load.prefill_tokens.fetch_add(tokens_, std::memory_order_relaxed);
  }
  ~PrefillTicket() { release(); }
  PrefillTicket(const PrefillTicket&) = delete;
  PrefillTicket& operator=(const PrefillTicket&) = delete;

  // The prefill is done. Idempotent.
  void release() {
    if (state_ == nullptr) return;
    state_->load.prefill_tokens.fetch_sub(tokens_, std::memory_order_relaxed);
    state_ = nullptr;
  }

 private:
  InstanceState* state_;
  uint64_t tokens_;
};

// Counts one in-flight request on an instance for the lifetime of the guard.
class InFlightGuard {
 public:
  explicit InFlightGuard(InstanceState& state) : state_(&state) {
    state_->load.in_flight.fetch_add(1, std::memory_order_relaxed);
    state_->load.sent_total.fetch_add(1, std::memory_order_relaxed);
  }
  ~InFlightGuard() {
    if (state_) state_->load.in_flight.fetch_sub(1, std::memory_order_relaxed);
  }
  InFlightGuard(const InFlightGuard&) = delete;
  InFlightGuard& operator=(const InFlightGuard&) = delete;

 private:
  InstanceState* state_;
};

}  // namespace rolter
