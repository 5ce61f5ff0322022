// The queue gate: where a request to a saturated route waits for its turn (SPEC §19), the thin
// asynchronous side of flow/route_queue.h.
//
//   if (flow_open(request, now)) { forward request; release_queue_slot(request); }
//   else {
//     QueuePass pass;
//     co_await pass_queue(client, watch, request, pass);
//     if (pass.answered) ... done (shed with 429, or the client left);
//     else forward pass.forwarded() — with x-rolter-queue-ms among its fields when it waited;
//     release_queue_slot(request);
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
// Thread-safety: runs on the worker serving the request; the queue is safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

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

  std::optional<ForwardRequest> with_fields;
  std::string fields;  // with_fields->extra_fields views it
};

// Every 100 ms a waiting request pokes its queue: the bound on how long a slot freed where the
// queue hears of it only indirectly stays idle.
inline constexpr std::chrono::milliseconds kQueueRecheck{100};

// REQUIRES: request.route.pool->flow set; the watch armed.
Task<void> pass_queue(beast::tcp_stream& client, ClientWatch& watch, const ForwardRequest& request,
                      QueuePass& pass);

// Whether the request goes straight to its attempts: its route has no queue, or the queue is
// empty and a candidate has room (no lock, no allocation).
inline bool flow_open(const ForwardRequest& request, Clock::TimePoint now) {
  const FlowGate* gate = request.route.pool->flow.get();
  return gate == nullptr || gate->open(now);
}

// A request of a flow-controlled route ended: its queue learns the drain and dispatches.
inline void release_queue_slot(const ForwardRequest& request) {
  if (const FlowGate* gate = request.route.pool->flow.get()) gate->queue->released();
}

}  // namespace rolter
