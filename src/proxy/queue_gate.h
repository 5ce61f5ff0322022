// The queue gate: where a request to a saturated route waits for its turn (SPEC §19), the thin
// asynchronous side of flow/route_queue.h.
//
//   if (flow_open(request, now)) { forward request; release_queue_slot(request); }
//   else {
//     QueuePass pass;
//     for (;;) {
//       co_await pass_queue(client, watch, request, pass);
//       if (pass.answered) ... done (shed with 429, or the client left);
//       forward pass.forwarded() — with x-rolter-queue-ms among its fields when it waited;
//       again = pass.displaced() && nothing was answered;
//       leave_queue_slot(request, watch, pass, !again);
//       if (!again) done;
//     }
//   }
//
// The unsaturated path is one check (flow_open(): an atomic and the candidates' loads, no lock,
// no allocation). Otherwise the request gets its band (x-rolter-priority under the key's
// ceiling, else the key's, team's or route's priority, else 4), its tenant (the key's team, else
// the key) and its cost (uncached prompt tokens, as the instances' KV indexes tell when they
// can, plus the output cap), and enters the route's queue. It waits on an Asio timer on its own
// worker: the queue's verdict cancels it (posted to that worker), the client watch cancels it
// when the client leaves (the request leaves the queue at once), and it wakes by itself every
// kRecheck to poke the queue (a slot freed by another route's request on a shared instance, an
// engine scrape) and at max_wait_ms, when the request is refused.
//
// A shed request is answered 429 `overloaded` in the API's error shape, with Retry-After from
// the queue's measured drain rate.
//
// Preemption (SPEC §19): a request dispatched from the queue of an aggregated route, in a band
// below one with `preempt`, is registered as displaceable until its answer begins (the watch
// asks at that point). Displaced, its attempt ends without answering and it passes the queue
// again with the same QueuePass: its max_wait_ms counts from its first arrival, its queue time
// adds up, and its attempts go on counting.
//
// Thread-safety: runs on the worker serving the request; the queue is safe from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "flow/preemption.h"
#include "proxy/forwarder.h"

namespace rolter {

struct QueuePass {
  // Set when the request must not be forwarded: shed (answered), or its client left (status 0,
  // not usable: forward() logs the 499).
  std::optional<ForwardResult> answered;
  // How long it waited in the queue, when it did; the access log's queue time.
  std::optional<uint64_t> queue_ms;
  // The request to forward: `original`, or a copy whose extra fields add x-rolter-queue-ms.
  const ForwardRequest& forwarded(const ForwardRequest& original) const {
    return with_fields ? *with_fields : original;
  }

  // Whether the queue displaced the request (it answered nothing, and is to wait again).
  bool displaced() const { return target != nullptr && target->displaced(); }

  std::optional<ForwardRequest> with_fields;
  std::string fields;  // with_fields->extra_fields views it
  // Preemption: the request's registration while it may be displaced.
  std::shared_ptr<PreemptTarget> target;
  uint64_t running_id = 0;
  // Across passes of a displaced request: when it first arrived, how long it has waited in all,
  // and the attempts it made.
  std::optional<std::chrono::steady_clock::time_point> first_entered;
  uint64_t waited_ms = 0;
  unsigned attempts = 0;
};

// Every 100 ms a waiting request pokes its queue: the bound on how long a slot freed where the
// queue hears of it only indirectly stays idle.
inline constexpr std::chrono::milliseconds kQueueRecheck{100};

// REQUIRES: request.route.pool->flow set; the watch armed.
Task<void> pass_queue(TimedStream& client, ClientWatch& watch, const ForwardRequest& request,
                      QueuePass& pass);

// Whether the request goes straight to its attempts: its route has no queue, or the queue is
// empty and a candidate has room (no lock, no allocation). Not on a route with a preempting
// band: there every request passes pass_queue(), which registers the displaceable ones.
inline bool flow_open(const ForwardRequest& request, Clock::TimePoint now) {
  const FlowGate* gate = request.route.pool->flow.get();
  return gate == nullptr || (!gate->preempts && gate->open(now));
}

// A request of a flow-controlled route ended: its queue learns the drain and dispatches.
inline void release_queue_slot(const ForwardRequest& request) {
  if (const FlowGate* gate = request.route.pool->flow.get()) gate->queue->released();
}

// The same for a request that passed the queue: it is no longer displaceable, and its slot is
// free. `completed` false: it was displaced and waits again (the drain rate does not count it).
void leave_queue_slot(const ForwardRequest& request, ClientWatch& watch, QueuePass& pass,
                      bool completed);

}  // namespace rolter
