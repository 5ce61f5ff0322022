// Which instances a snapshot wants the KV-event service subscribed to (SPEC §6.8), and with what
// settings: every instance of a provider whose [providers.kv_events] names an endpoint.
//
// Thread-safety: free functions over an immutable snapshot.
#pragma once

#include <map>

#include "config/config.h"

namespace rolter {

class Snapshot;
struct InstanceState;

using KvStreamsWanted = std::map<InstanceState*, KvEventsConfig>;

// Keyed by the instance's state in the LoadTracker, which outlives reloads: the same instance in
// the next snapshot is the same key.
KvStreamsWanted kv_streams_wanted(const Snapshot& snapshot);

// Whether a running subscription made with `a` still serves a snapshot that asks for `b`.
bool same_kv_events_config(const KvEventsConfig& a, const KvEventsConfig& b);

}  // namespace rolter
