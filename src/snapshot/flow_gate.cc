#include "snapshot/flow_gate.h"

#include <algorithm>
#include <vector>

#include "fleet/instance_capacity.h"
#include "observe/queue_metrics.h"
#include "snapshot/snapshot.h"

namespace rolter {

std::unique_ptr<const FlowGate> make_flow_gate(const RoutePool& pool, const std::string& series,
                                               const Config& config,
                                               std::optional<uint32_t> route_priority,
                                               const BreakerParams& breaker, LoadTracker& tracker,
                                               Metrics* metrics) {
  if (pool.candidates.empty()) return nullptr;
  std::vector<InstanceBound> bounds;
  bounds.reserve(pool.candidates.size());
  for (const Candidate& c : pool.candidates) {
    auto it = std::find_if(config.providers.begin(), config.providers.end(),
                           [&](const ProviderConfig& p) { return p.name == c.provider->name; });
    if (it == config.providers.end()) return nullptr;
    // One unbounded candidate and the route never saturates: no queue at all.
    if (!it->max_in_flight_per_instance && !it->max_waiting_per_instance) return nullptr;
    bounds.push_back(InstanceBound{.state = c.state,
                                   .max_in_flight = it->max_in_flight_per_instance,
                                   .max_waiting = it->max_waiting_per_instance});
  }
  auto gate = std::make_unique<FlowGate>();
  gate->capacity = std::make_shared<const InstanceCapacity>(std::move(bounds), breaker);
  gate->queue = &tracker.flow().route(series);
  if (route_priority) gate->priority = static_cast<uint8_t>(*route_priority);
  gate->default_output_tokens = config.limits.default_output_tokens;
  std::array<bool, kQueueBands> preempt{};
  for (const QueueBandConfig& band : config.queue.bands) {
    if (band.band >= kQueueBands) continue;
    if (band.max_ttft_ms) gate->max_ttft_ms[band.band] = *band.max_ttft_ms;
    preempt[band.band] = band.preempt;
    gate->preempts = gate->preempts || band.preempt;
  }
  gate->reserve = config.queue.fair_reserve;
  gate->preempts = gate->preempts || config.queue.fair_preempt || gate->reserve > 0;
  if (const QueueMetrics* families = tracker.flow().metrics(metrics)) {
    gate->series = families->series(series);
  }
  gate->queue->configure(gate->capacity,
                         QueueSettings{.max_requests = config.queue.max_requests,
                                       .max_wait_ms = config.queue.max_wait_ms,
                                       .max_ttft_ms = gate->max_ttft_ms,
                                       .preempt = preempt,
                                       .fair_preempt = config.queue.fair_preempt,
                                       .fair_reserve = config.queue.fair_reserve,
                                       .per_tenant_metrics = config.metrics.per_key},
                         gate->series);
  return gate;
}

}  // namespace rolter
