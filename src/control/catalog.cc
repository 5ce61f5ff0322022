#include "control/catalog.h"

#include <unordered_map>

#include "balance/strategy_names.h"
#include "balance/strategy_registry.h"

namespace rolter {
namespace {

using json = nlohmann::json;

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
  const StrategyInfo* info = find_strategy(route.strategy);
  if (info == nullptr) return false;
  if (info->table != StrategyTable::kPolicy) return info->reads_weights;
  // Policy mode reads the weights only as its static split: every target weighted, no plugin.
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
  for (const StrategyInfo& info : strategy_registry()) {
    data.push_back({{"name", info.name},
                    {"default", info.name == strategy::kDefault},
                    {"per_route", info.per_route},
                    {"reads_weights", info.reads_weights},
                    {"telemetry", null_or(telemetry_name(info.telemetry))},
                    {"summary", info.summary}});
  }
  return {{"object", "list"}, {"data", std::move(data)}};
}

}  // namespace rolter
