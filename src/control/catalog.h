// What the dashboard's catalog and strategy picker read (SPEC §11), from the running config:
//
//   catalog_json(config, read_only)  routes and provider groups with their targets, and the share
//                                    of traffic each target gets, only where the strategy reads
//                                    weights (SPEC §6: weighted, pipeline, adaptive, and policy
//                                    mode's target-weight mode); null elsewhere, with a note.
//   strategies_json()                every strategy the picker knows, whether a route may choose
//                                    it (adaptive has its own screen), whether it reads weights,
//                                    and the telemetry source it needs on the providers.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <string_view>

#include "config/config.h"

namespace rolter {

// Whether this route's strategy reads its targets' weights: strategy_reads_weights(), except that
// a policy route does only in target-weight mode (every target weighted, no plugin enabled).
bool route_reads_weights(const RouteConfig& route);

// {"object": "list", "data": [{"kind": "route" | "provider_group", "name", "strategy",
//   "read_only", "reads_weights", "weights_note", "targets": [{"provider", "model", "weight",
//   "share", "instances"}]}]}. `read_only(kind, name)` says whether an entity is the file's.
nlohmann::json catalog_json(const Config& config,
                            const std::function<bool(std::string_view kind,
                                                     const std::string& name)>& read_only);

// {"object": "list", "data": [{"name", "per_route", "reads_weights", "telemetry", "summary"}]}.
nlohmann::json strategies_json();

}  // namespace rolter
