#include "control/catalog.h"

#include <array>
#include <unordered_map>

#include "balance/balancer_factory.h"

namespace rolter {
namespace {

using json = nlohmann::json;

struct StrategyInfo {
  std::string_view name;
  std::string_view telemetry;  // "" = none
  std::string_view summary;
};

// One line each, for the picker. SPEC §6 and §7 are the long form.
constexpr std::array<StrategyInfo, 16> kInfo = {{
    {"round_robin", "", "Each candidate in turn."},
    {"random", "", "A candidate at random."},
    {"power_of_two", "", "Two candidates at random; the less loaded wins."},
    {"weighted", "", "Smooth weighted round robin over the targets' weights."},
    {"consistent_hash", "", "The same session or prompt prefix goes to the same candidate."},
    {"cache_aware", "", "Approximate prefix affinity, with a load guard."},
    {"pipeline", "", "A weighted stack of scorers; the best total wins."},
    {"cheapest", "", "The lowest catalog price, then the least load."},
    {"fastest", "", "The lowest smoothed latency, then the least load."},
    {"predicted_latency", "", "The lowest latency predicted from queue depth and prompt size."},
    {"lora_aware", "", "Where the requested adapter is resident, then prefix and load."},
    {"precise_cache_aware", "kv_events",
     "Exact KV-cache residency from each engine's KV-event stream."},
    {"kv_cost", "kv_events", "The lowest estimated time to first token, from KV residency."},
    {"lmcache_aware", "lmcache", "The most LMCache headroom, from each instance's occupancy."},
    {"adaptive", "",
     "Latency, cost and load blended under the deployment-wide policy (its own screen)."},
    {"policy", "", "Plugins (session affinity, least in-flight, a decision service) combined."},
}};

const StrategyInfo* info_of(std::string_view name) {
  for (const StrategyInfo& i : kInfo) {
    if (i.name == name) return &i;
  }
  return nullptr;
}

json null_or(std::string_view text) { return text.empty() ? json(nullptr) : json(text); }

struct Row {
  std::string provider;
  json model;
  double weight = 1;
  size_t instances = 1;
};

json entry(std::string_view kind, const std::string& name, const std::string& strategy,
           bool read_only, bool reads_weights, const std::vector<Row>& rows) {
  double total = 0;
  for (const Row& r : rows) total += r.weight;
  json targets = json::array();
  for (const Row& r : rows) {
    json share = nullptr;
    if (reads_weights) share = total > 0 ? r.weight / total : 0.0;
    targets.push_back({{"provider", r.provider},
                       {"model", r.model},
                       {"weight", r.weight},
                       {"share", share},
                       {"instances", r.instances}});
  }
  return {{"kind", kind},
          {"name", name},
          {"strategy", strategy},
          {"read_only", read_only},
          {"reads_weights", reads_weights},
          {"weights_note",
           reads_weights ? json(nullptr) : json("strategy " + strategy + " ignores weights")},
          {"targets", std::move(targets)}};
}

}  // namespace

bool route_reads_weights(const RouteConfig& route) {
  if (route.strategy != "policy") return strategy_reads_weights(route.strategy);
  const bool plugins = route.policy && (route.policy->least_inflight_weight ||
                                        route.policy->session_affinity_weight ||
                                        route.policy->decision_service);
  bool all_weighted = !route.targets.empty();
  for (const TargetConfig& t : route.targets) all_weighted = all_weighted && t.weight.has_value();
  return all_weighted && !plugins;
}

json catalog_json(const Config& config,
                  const std::function<bool(std::string_view, const std::string&)>& read_only) {
  std::unordered_map<std::string, size_t> instances;
  for (const ProviderConfig& p : config.providers) instances[p.name] = p.instances.size();
  auto instances_of = [&](const std::string& provider) {
    auto it = instances.find(provider);
    return it == instances.end() ? size_t{0} : it->second;
  };
  json data = json::array();
  for (const RouteConfig& r : config.routes) {
    std::vector<Row> rows;
    for (const TargetConfig& t : r.targets) {
      rows.push_back({t.provider, t.model, t.weight.value_or(1), instances_of(t.provider)});
    }
    data.push_back(entry("route", r.name, r.strategy, read_only("route", r.name),
                         route_reads_weights(r), rows));
  }
  for (const ProviderGroupConfig& g : config.provider_groups) {
    std::vector<Row> rows;
    for (const GroupMemberConfig& m : g.members) {
      rows.push_back({m.provider, null_or(m.upstream_model), m.weight, instances_of(m.provider)});
    }
    data.push_back(entry("provider_group", g.slug, g.strategy,
                         read_only("provider_group", g.slug), strategy_reads_weights(g.strategy),
                         rows));
  }
  return {{"object", "list"}, {"data", std::move(data)}};
}

json strategies_json() {
  json data = json::array();
  auto add = [&](std::string_view name) {
    const StrategyInfo* info = info_of(name);
    data.push_back({{"name", name},
                    {"per_route", name != "adaptive"},
                    {"reads_weights", strategy_reads_weights(name)},
                    {"telemetry", info ? null_or(info->telemetry) : json(nullptr)},
                    {"summary", info ? json(info->summary) : json("")}});
  };
  for (std::string_view name : known_strategies()) add(name);
  add("policy");
  return {{"object", "list"}, {"data", std::move(data)}};
}

}  // namespace rolter
