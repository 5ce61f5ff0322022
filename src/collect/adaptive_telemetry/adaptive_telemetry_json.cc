#include "collect/adaptive_telemetry/adaptive_telemetry_json.h"

#include <nlohmann/json.hpp>

#include <optional>

#include "snapshot/snapshot.h"

namespace rolter {
namespace {

using Json = nlohmann::json;

Json optional_number(const std::optional<double>& value) {
  return value ? Json(*value) : Json(nullptr);
}

Json split_json(const AdaptiveSplit& split) {
  Json out = Json::object();
  for (size_t k = 0; k < kAdaptiveDecisionCount; ++k) {
    out[std::string(adaptive_decision_name(static_cast<AdaptiveDecision>(k)))] = split[k];
  }
  return out;
}

Json policy_json(const AdaptivePolicy& p) {
  return Json{{"enabled", p.enabled},
              {"latency_weight", p.latency_weight},
              {"cost_weight", p.cost_weight},
              {"load_weight", p.load_weight},
              {"exploration_ratio", p.exploration_ratio},
              {"min_samples", p.min_samples}};
}

}  // namespace

std::vector<AdaptiveRouteSample> collect_adaptive_samples(const Snapshot& snapshot,
                                                          Clock::TimePoint now) {
  std::vector<AdaptiveRouteSample> out;
  for (const auto& pool : snapshot.pools()) {
    if (pool->adaptive_state == nullptr) continue;
    const auto* balancer = dynamic_cast<const AdaptiveBalancer*>(pool->balancer.get());
    if (balancer == nullptr) continue;
    AdaptiveRouteSample sample = balancer->sample(pool->loads(), now);
    // Group pools are reported under their address, as their metrics are.
    sample.route = pool->kind == RoutePool::Kind::kGroup ? pool->name + "/*" : pool->name;
    // The snapshot's names (with "#<instance>" when a provider has several) tell instances apart.
    for (size_t i = 0; i < sample.candidates.size() && i < pool->candidates.size(); ++i) {
      sample.candidates[i].target = pool->candidates[i].explain_name;
    }
    out.push_back(std::move(sample));
  }
  return out;
}

std::string adaptive_telemetry_json(const std::string& node_id,
                                    const std::vector<AdaptiveRouteSample>& routes) {
  Json doc = {{"node_id", node_id}, {"routes", Json::array()}};
  for (const AdaptiveRouteSample& r : routes) {
    Json targets = Json::array();
    for (const AdaptiveCandidateSample& c : r.candidates) {
      targets.push_back(Json{
          {"target", c.target},
          {"score", c.score},
          {"components",
           {{"latency", c.latency_score}, {"cost", c.cost_score}, {"load", c.load_score}}},
          {"signals",
           {{"latency_ms", optional_number(c.latency_ms)},
            {"price", optional_number(c.price)},
            {"in_flight", c.in_flight}}},
          {"picks", c.picks},
          {"picks_by_decision", split_json(c.picks_by_decision)},
          {"seconds_since_last_pick", optional_number(c.seconds_since_last_pick)},
      });
    }
    doc["routes"].push_back(Json{{"route", r.route},
                                 {"engaged", r.engaged},
                                 {"served", r.served},
                                 {"decisions", split_json(r.decisions)},
                                 {"policy", policy_json(r.policy)},
                                 {"targets", std::move(targets)}});
  }
  // Replace, not throw, on a label that is not valid UTF-8.
  return doc.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace rolter
