#include "collect/kv_events/kv_streams_wanted.h"

#include "fleet/load_tracker.h"
#include "snapshot/snapshot.h"

namespace rolter {

KvStreamsWanted kv_streams_wanted(const Snapshot& snapshot) {
  KvStreamsWanted wanted;
  for (const auto& provider : snapshot.config().providers) {
    // The pin pool lists every instance of the provider once, in config order.
    const RoutePool* pin = snapshot.provider_pool(provider.name);
    if (pin == nullptr || pin->candidates.size() != provider.instances.size()) continue;
    for (size_t k = 0; k < provider.instances.size(); ++k) {
      const auto& kv_events = provider.instances[k].kv_events;
      if (kv_events && !kv_events->endpoint.empty()) {
        wanted.emplace(pin->candidates[k].state, *kv_events);
      }
    }
  }
  return wanted;
}

bool same_kv_events_config(const KvEventsConfig& a, const KvEventsConfig& b) {
  return a.endpoint == b.endpoint && a.replay_endpoint == b.replay_endpoint && a.topic == b.topic &&
         a.block_size == b.block_size && a.max_blocks == b.max_blocks &&
         a.stale_secs == b.stale_secs;
}

}  // namespace rolter
