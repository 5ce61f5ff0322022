// The strategy registry: one row per strategy, and the only list of them. The config validator,
// the snapshot builder (through make_balancer), `rolter check`'s warnings, /api/v1/strategies, the
// catalog's share rule, the dashboard (through that API) and rolter-bench all read it.
//
// Adding a strategy: its balancer in strategies/ (or a stack in stacks.cc), its name in
// strategy_names.h, and one row in strategy_registry.cc.
//
//   const StrategyInfo* info = find_strategy(route.strategy);
//   if (info == nullptr) ...unknown...;
//   if (info->telemetry == StrategyTelemetry::kKvEvents) ...warn when no instance has kv_events...
//   auto balancer = info->make(candidates, deps, settings);
//
// Thread-safety: immutable.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "balance/balancer_factory.h"

namespace rolter {

// What a strategy needs from the fleet beyond what the gateway sees itself.
enum class StrategyTelemetry : uint8_t { kNone, kKvEvents, kLmcache };

// "" (none), "kv_events", "lmcache": the provider instance table that carries it.
std::string_view telemetry_name(StrategyTelemetry telemetry);

// Which of a route's own tables the strategy reads ([routes.pipeline], [routes.policy]); a table
// on a route whose strategy does not read it is a config error.
enum class StrategyTable : uint8_t { kNone, kPipeline, kPolicy };

using MakeBalancer = tl::expected<std::unique_ptr<LoadBalancer>, std::string> (*)(
    std::span<const CandidateSpec> candidates, const BalancerDeps& deps,
    const RouteSettings& settings);

struct StrategyInfo {
  std::string_view name;
  std::string_view summary;  // one line, for the strategy picker; SPEC §6 is the long form
  bool reads_weights = false;
  // Scores the request's token ids, so a request without them is worth tokenising first.
  bool reads_token_ids = false;
  StrategyTelemetry telemetry = StrategyTelemetry::kNone;
  StrategyTable table = StrategyTable::kNone;
  // False: governed by a deployment-wide policy ([adaptive_routing]), not the route alone.
  bool per_route = true;
  // In known_strategies(): the names `strategy = ` takes. Policy mode is checked as a mode, with
  // its [routes.policy] table, rather than as one more strategy name.
  bool listed = true;
  // In rolter-bench replay's default set: it needs nothing a replay cannot give it (the
  // simulated engines publish KV events, but no LMCache occupancy and no deployment policy).
  bool replayed_by_default = true;
  MakeBalancer make = nullptr;
};

// Every strategy, in the order the picker and --help list them.
std::span<const StrategyInfo> strategy_registry();

// The row of `name`, or null when no strategy has that name.
const StrategyInfo* find_strategy(std::string_view name);

// `unknown strategy "x"; known strategies: round_robin, ...`
std::string unknown_strategy_message(std::string_view name);

}  // namespace rolter
