// Flow control's keys in rolter.toml (SPEC §19), for the schema walker and the validator
// (internal to config/): [queue], a provider's saturation bounds, and the `priority` of routes,
// keys and teams (and a key's `max_priority`).
//
// Thread-safety: pure apart from the reader and `diag`; call from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "config/config.h"
#include "config/diagnostics.h"
#include "config/toml_reader.h"

namespace rolter::config_internal {

// A band, 0 (lowest) … 7, at `key` when present.
void read_priority(TableReader& in, std::string_view key, std::optional<uint32_t>& out);

// max_in_flight_per_instance (at least 1) and max_waiting_per_instance (0 = any waiting request
// saturates) of a provider.
void read_provider_flow(TableReader& in, ProviderConfig& out);

// [queue]: max_requests, max_wait_ms, fair_preempt, fair_reserve, and [[queue.bands]] (band,
// preempt, max_ttft_ms).
void read_queue(TableReader& in, QueueConfig& out);

// What relates flow control's values to others: a waiting bound needs the engine's count; a band
// is configured once.
void check_flow(const Config& config, Diagnostics& diag);

}  // namespace rolter::config_internal
