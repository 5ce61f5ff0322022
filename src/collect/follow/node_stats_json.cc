#include "collect/follow/node_stats_json.h"

#include <prometheus/metric_family.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <span>
#include <string_view>

#include "observe/metrics.h"

namespace rolter {
namespace {

using Json = nlohmann::json;

// Response classes as reported: requests_total's code_class 1xx, 3xx and "other" all count as
// "other".
constexpr std::array<const char*, 4> kClasses = {"2xx", "4xx", "5xx", "other"};
using ClassCounts = std::array<uint64_t, kClasses.size()>;

size_t class_index(std::string_view code) {
  for (size_t i = 0; i + 1 < kClasses.size(); ++i) {
    if (code == kClasses[i]) return i;
  }
  return kClasses.size() - 1;
}

// The target of requests answered before any target was picked (Snapshot's no_target series).
constexpr std::string_view kNoTarget = "none";

struct HistogramSum {
  uint64_t count = 0;
  double sum = 0;
  std::vector<double> bounds;
  std::vector<uint64_t> cumulative;

  void add(const prometheus::ClientMetric::Histogram& h) {
    count += h.sample_count;
    sum += h.sample_sum;
    if (bounds.empty()) {
      for (const auto& bucket : h.bucket) {
        bounds.push_back(bucket.upper_bound);
        cumulative.push_back(0);
      }
    }
    // One series per route: a second one (never expected) is added only when its buckets match.
    if (h.bucket.size() != bounds.size()) return;
    for (size_t i = 0; i < bounds.size(); ++i) cumulative[i] += h.bucket[i].cumulative_count;
  }
};

struct TargetSum {
  uint64_t picks = 0;
  ClassCounts responses{};
  HistogramSum duration;
  HistogramSum ttft;
};

// One endpoint's state, from the gauges labelled by endpoint ("provider@base_url"); breaker and
// kv_state are the index of the state their state set marks.
struct InstanceSum {
  double in_flight = 0;
  std::optional<double> breaker, healthy, parked, kv_state, lmcache, engine_load;
};

// A route's gateway queue (flow control), once it has queued or shed.
struct QueueSum {
  std::array<uint64_t, 8> depth{};  // waiting now, per band 0..7
  std::map<std::string, uint64_t> shed{
      {"full", 0}, {"predicted_wait", 0}, {"expired", 0}, {"max_ttft", 0}};
};

struct RouteSum {
  ClassCounts requests{};
  std::optional<QueueSum> queue;
  uint64_t retries = 0;
  uint64_t tokens_in = 0;
  uint64_t tokens_out = 0;
  HistogramSum duration;
  HistogramSum ttft;
  std::map<std::string, TargetSum> targets;
};

QueueSum& queue_of(RouteSum& r) {
  if (!r.queue) r.queue.emplace();
  return *r.queue;
}

std::string_view label(const prometheus::ClientMetric& metric, std::string_view name) {
  for (const auto& l : metric.label) {
    if (l.name == name) return l.value;
  }
  return {};
}

uint64_t count(double value) { return value > 0 ? static_cast<uint64_t>(std::llround(value)) : 0; }

// Milliseconds to the microsecond: the dashboard shows no finer.
double ms(double seconds) { return std::round(seconds * 1e6) / 1e3; }

Json classes_json(const ClassCounts& counts) {
  Json out = Json::object();
  for (size_t i = 0; i < kClasses.size(); ++i) out[kClasses[i]] = counts[i];
  return out;
}

Json histogram_json(const HistogramSum& h) {
  Json out = {{"count", h.count}, {"sum", ms(h.sum)}};
  const bool sampled = !h.cumulative.empty() && h.cumulative.back() > 0;
  for (const auto& [name, q] : {std::pair{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}}) {
    out[name] = sampled ? Json(ms(histogram_quantile(q, h.bounds, h.cumulative))) : Json(nullptr);
  }
  // The buckets themselves, so the dashboard can take percentiles of a window: the difference
  // of two reports. "le" is in ms; null is +Inf.
  Json buckets = Json::array();
  for (size_t i = 0; i < h.bounds.size(); ++i) {
    buckets.push_back({{"le", std::isinf(h.bounds[i]) ? Json(nullptr) : Json(ms(h.bounds[i]))},
                       {"count", h.cumulative[i]}});
  }
  out["buckets"] = std::move(buckets);
  return out;
}

Json state_name(const std::optional<double>& value, std::span<const std::string_view> names) {
  if (!value) return nullptr;
  const auto i = static_cast<size_t>(std::llround(*value));
  return i < names.size() ? Json(names[i]) : Json(nullptr);
}

// The index of a state-set series' `state` label in `names`, or nullopt.
std::optional<double> state_index(const prometheus::ClientMetric& metric,
                                  std::span<const std::string_view> names) {
  const std::string_view state = label(metric, "state");
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == state) return static_cast<double>(i);
  }
  return std::nullopt;
}

Json number_or_null(const std::optional<double>& value) {
  return value && std::isfinite(*value) ? Json(*value) : Json(nullptr);
}

Json instance_json(const std::string& endpoint, const InstanceSum& s) {
  const auto at = endpoint.find('@');
  return {{"endpoint", endpoint},
          {"provider", endpoint.substr(0, at)},
          {"base_url", at == std::string::npos ? "" : endpoint.substr(at + 1)},
          {"in_flight", count(s.in_flight)},
          {"breaker", state_name(s.breaker, kBreakerStateNames)},
          {"healthy", s.healthy ? Json(*s.healthy > 0) : Json(nullptr)},
          {"parked", s.parked ? Json(*s.parked > 0) : Json(nullptr)},
          {"kv_events", state_name(s.kv_state, kKvStateNames)},
          {"lmcache_occupancy", number_or_null(s.lmcache)},
          {"engine_load", number_or_null(s.engine_load)}};
}

// Adds one family's per-endpoint gauges.
void add_instance_family(const prometheus::MetricFamily& family,
                         std::map<std::string, InstanceSum>& instances) {
  struct Slot {
    std::string_view family;
    std::optional<double> InstanceSum::*field;
    std::span<const std::string_view> states;  // a state set's states; empty for a plain gauge
  };
  static constexpr Slot kSlots[] = {
      {"rolter_breaker_state", &InstanceSum::breaker, kBreakerStateNames},
      {"rolter_endpoint_healthy", &InstanceSum::healthy, {}},
      {"rolter_endpoint_parked", &InstanceSum::parked, {}},
      {"rolter_kv_events_state", &InstanceSum::kv_state, kKvStateNames},
      {"rolter_lmcache_occupancy_ratio", &InstanceSum::lmcache, {}},
      {"rolter_engine_load", &InstanceSum::engine_load, {}},
  };
  const bool in_flight = family.name == "rolter_in_flight";
  const Slot* slot = nullptr;
  for (const Slot& s : kSlots) {
    if (s.family == family.name) slot = &s;
  }
  if (!in_flight && slot == nullptr) return;
  for (const auto& metric : family.metric) {
    const std::string endpoint(label(metric, "endpoint"));
    if (endpoint.empty()) continue;
    InstanceSum& sum = instances[endpoint];
    if (in_flight) {
      sum.in_flight = metric.gauge.value;
    } else if (slot->states.empty()) {
      sum.*(slot->field) = metric.gauge.value;
    } else if (metric.gauge.value > 0) {
      sum.*(slot->field) = state_index(metric, slot->states);
    }
  }
}

// Adds one family's series to the routes they name.
void add_family(const prometheus::MetricFamily& family, std::map<std::string, RouteSum>& routes) {
  const std::string& name = family.name;
  for (const auto& metric : family.metric) {
    const std::string route(label(metric, "route"));
    if (route.empty()) continue;
    if (name == "rolter_requests_total") {
      const size_t k = class_index(label(metric, "code_class"));
      const uint64_t n = count(metric.counter.value);
      RouteSum& r = routes[route];
      r.requests[k] += n;
      const std::string_view target = label(metric, "target");
      if (target != kNoTarget) r.targets[std::string(target)].responses[k] += n;
    } else if (name == "rolter_picks_total") {
      // Summed over strategies: a reload may change a route's strategy, not its targets' picks.
      RouteSum& r = routes[route];
      const std::string_view target = label(metric, "target");
      if (target != kNoTarget) r.targets[std::string(target)].picks += count(metric.counter.value);
    } else if (name == "rolter_retries_total") {
      routes[route].retries += count(metric.counter.value);
    } else if (name == "rolter_tokens_total") {
      RouteSum& r = routes[route];
      (label(metric, "direction") == "in" ? r.tokens_in : r.tokens_out) +=
          count(metric.counter.value);
    } else if (name == "rolter_request_duration_seconds") {
      routes[route].duration.add(metric.histogram);
    } else if (name == "rolter_ttft_seconds") {
      routes[route].ttft.add(metric.histogram);
    } else if (name == "rolter_queue_depth") {
      const std::string_view band = label(metric, "band");
      const size_t b = band.size() == 1 && band[0] >= '0' && band[0] <= '7' ? band[0] - '0' : 8;
      QueueSum& q = queue_of(routes[route]);
      if (b < q.depth.size()) q.depth[b] = count(metric.gauge.value);
    } else if (name == "rolter_shed_total") {
      queue_of(routes[route]).shed[std::string(label(metric, "reason"))] +=
          count(metric.counter.value);
    } else if (name == "rolter_target_duration_seconds" || name == "rolter_target_ttft_seconds") {
      const std::string_view target = label(metric, "target");
      if (target == kNoTarget) continue;
      TargetSum& t = routes[route].targets[std::string(target)];
      (name == "rolter_target_duration_seconds" ? t.duration : t.ttft).add(metric.histogram);
    }
  }
}

}  // namespace

double histogram_quantile(double q, const std::vector<double>& bounds,
                          const std::vector<uint64_t>& cumulative) {
  const double rank = q * static_cast<double>(cumulative.back());
  for (size_t i = 0; i < cumulative.size(); ++i) {
    if (cumulative[i] == 0 || static_cast<double>(cumulative[i]) < rank) continue;
    const double lower = i == 0 ? 0.0 : bounds[i - 1];
    if (std::isinf(bounds[i])) return lower;  // no upper bound to interpolate towards
    const uint64_t below = i == 0 ? 0 : cumulative[i - 1];
    const double in_bucket = static_cast<double>(cumulative[i] - below);
    return lower + (bounds[i] - lower) * (rank - static_cast<double>(below)) / in_bucket;
  }
  return bounds.size() >= 2 ? bounds[bounds.size() - 2] : 0.0;
}

std::string node_stats_json(const NodeStatsHeader& header,
                            const std::vector<prometheus::MetricFamily>& families) {
  std::map<std::string, RouteSum> routes;
  std::map<std::string, InstanceSum> instances;
  for (const auto& family : families) {
    add_family(family, routes);
    add_instance_family(family, instances);
  }
  Json doc = {{"node_id", header.node_id},
              {"version", header.version},
              {"snapshot_version", header.snapshot_version},
              {"at_ms", header.at_ms},
              {"started_at_ms", header.started_at_ms},
              {"routes", Json::array()}};
  for (const auto& [name, r] : routes) {
    Json targets = Json::array();
    for (const auto& [target, t] : r.targets) {
      targets.push_back({{"target", target},
                         {"picks", t.picks},
                         {"responses", classes_json(t.responses)},
                         {"duration_ms", histogram_json(t.duration)},
                         {"ttft_ms", histogram_json(t.ttft)}});
    }
    Json route = {{"route", name},
                  {"requests", classes_json(r.requests)},
                  {"retries", r.retries},
                  {"tokens_in", r.tokens_in},
                  {"tokens_out", r.tokens_out},
                  {"duration_ms", histogram_json(r.duration)},
                  {"ttft_ms", histogram_json(r.ttft)},
                  {"targets", std::move(targets)}};
    if (r.queue) route["queue"] = {{"depth", r.queue->depth}, {"shed", r.queue->shed}};
    doc["routes"].push_back(std::move(route));
  }
  doc["instances"] = Json::array();
  for (const auto& [instance, sum] : instances) {
    doc["instances"].push_back(instance_json(instance, sum));
  }
  // Replace, not throw, on a label that is not valid UTF-8.
  return doc.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace rolter
