#include "observe/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <limits>
#include <thread>
#include <utility>

#include "common/mutex.h"
#include "observe/process_metrics.h"
#include "observe/series_table.h"

namespace rolter {

namespace {

// Latency buckets in seconds: from sub-millisecond gateway answers to multi-minute generations.
const prometheus::Histogram::BucketBoundaries& latency_buckets() {
  static const prometheus::Histogram::BucketBoundaries kBuckets = {
      0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300};
  return kBuckets;
}

// Tokenize buckets in seconds: a loopback engine answers in well under a millisecond, and the
// default budget (tokenize_timeout_ms) is 50 ms; the top buckets show timeouts set far higher.
const prometheus::Histogram::BucketBoundaries& tokenize_buckets() {
  static const prometheus::Histogram::BucketBoundaries kBuckets = {
      0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
  return kBuckets;
}

// By Metrics::TokenizeOutcome.
constexpr std::array<const char*, 3> kTokenizeOutcomes = {"ok", "timeout", "error"};

// Decision-service buckets in seconds: a decision engine runs a model, tens of milliseconds to a
// second or two; the call's deadline is 3 s, so the top bucket holds the timeouts.
const prometheus::Histogram::BucketBoundaries& decision_buckets() {
  static const prometheus::Histogram::BucketBoundaries kBuckets = {
      0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5};
  return kBuckets;
}

// By Metrics::DecisionOutcome.
constexpr std::array<const char*, 5> kDecisionOutcomes = {"ok", "timeout", "error", "status",
                                                          "invalid"};

constexpr std::array<const char*, 3> kSplitPaths = {"disaggregated", "aggregated",
                                                    "prefill_failed"};
constexpr std::array<const char*, 3> kSplitCounts = {"kv_index", "tokens", "bytes"};

constexpr std::array<const char*, 6> kCodeClasses = {"other", "1xx", "2xx", "3xx", "4xx", "5xx"};

// Inter-token buckets in seconds: an engine decodes a token every few to a few hundred
// milliseconds; the top buckets show stalls.
const prometheus::Histogram::BucketBoundaries& inter_token_buckets() {
  static const prometheus::Histogram::BucketBoundaries kBuckets = {
      0.001, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 1, 2.5, 5};
  return kBuckets;
}

// By Metrics::ParkReason.
constexpr std::array<const char*, 2> kParkReasons = {"refused", "429"};

constexpr std::array<const char*, 4> kAdaptiveDecisions = {"blend", "exploration", "probe",
                                                           "fallback"};

// The label an endpoint's series carry.
prometheus::Labels endpoint_labels(std::string_view endpoint) {
  return {{"endpoint", std::string(endpoint)}};
}

}  // namespace

struct Metrics::Families {
  explicit Families(prometheus::Registry& r)
      : requests(prometheus::BuildCounter()
                     .Name("rolter_requests_total")
                     .Help("Responses sent to clients, by route, target and status class")
                     .Register(r)),
        requests_by_code(prometheus::BuildCounter()
                             .Name("rolter_requests_by_code_total")
                             .Help("Responses sent to clients, by route and exact status (the "
                                   "usual ones; \"other\" for the rest)")
                             .Register(r)),
        duration(prometheus::BuildHistogram()
                     .Name("rolter_request_duration_seconds")
                     .Help("Time from request to the end of the response, by route")
                     .Register(r)),
        ttft(prometheus::BuildHistogram()
                 .Name("rolter_ttft_seconds")
                 .Help("Time from request to the first token (the first content event of a stream; "
                       "the response head otherwise), by route")
                 .Register(r)),
        inter_token(prometheus::BuildHistogram()
                        .Name("rolter_inter_token_seconds")
                        .Help("Time between the content events of a stream, as relayed, by route "
                              "(k events read at once after a gap count as k gaps of gap/k)")
                        .Register(r)),
        target_duration(prometheus::BuildHistogram()
                            .Name("rolter_target_duration_seconds")
                            .Help("Time from request to the end of the response, by route and "
                                  "the target that answered")
                            .Register(r)),
        target_ttft(prometheus::BuildHistogram()
                        .Name("rolter_target_ttft_seconds")
                        .Help("Time to the first token, by route and the target that answered")
                        .Register(r)),
        picks(
            prometheus::BuildCounter()
                .Name("rolter_picks_total")
                .Help("Candidates picked by the balancer and tried, by route, strategy and target")
                .Register(r)),
        retries(prometheus::BuildCounter()
                    .Name("rolter_retries_total")
                    .Help("Attempts after the first, by route")
                    .Register(r)),
        tokens(prometheus::BuildCounter()
                   .Name("rolter_tokens_total")
                   .Help("Tokens the upstreams reported in their usage, by route and direction")
                   .Register(r)),
        parks(prometheus::BuildCounter()
                  .Name("rolter_parks_total")
                  .Help("Endpoints parked, by reason (refused, 429)")
                  .Register(r)),
        fallbacks(prometheus::BuildCounter()
                      .Name("rolter_fallbacks_total")
                      .Help("Requests handed from a route that could not answer to its next "
                            "fallback route, by route and the route they went to")
                      .Register(r)),
        route_endpoints(prometheus::BuildGauge()
                            .Name("rolter_route_endpoints")
                            .Help("Endpoints among a route's candidates")
                            .Register(r)),
        route_available(prometheus::BuildGauge()
                            .Name("rolter_route_endpoints_available")
                            .Help("Endpoints among a route's candidates that may take a request "
                                  "now: not parked, healthy, breaker not open")
                            .Register(r)),
        in_flight(prometheus::BuildGauge()
                      .Name("rolter_in_flight")
                      .Help("Requests in flight to an endpoint from this node")
                      .Register(r)),
        breaker(prometheus::BuildGauge()
                    .Name("rolter_breaker_state")
                    .Help("An endpoint's circuit breaker, as a state set: 1 for its state "
                          "(closed, open, half_open), 0 for the others")
                    .Register(r)),
        healthy(prometheus::BuildGauge()
                    .Name("rolter_endpoint_healthy")
                    .Help("1 when the endpoint passes its active health checks (or has none)")
                    .Register(r)),
        parked(prometheus::BuildGauge()
                   .Name("rolter_endpoint_parked")
                   .Help("1 while the endpoint is parked")
                   .Register(r)),
        reloads(prometheus::BuildCounter()
                    .Name("rolter_config_reloads_total")
                    .Help("Config loads, by result")
                    .Register(r)),
        reload_errors(prometheus::BuildCounter()
                          .Name("rolter_config_reload_errors_total")
                          .Help("Config reloads that failed validation and kept the running config")
                          .Register(r)
                          .Add({})),
        version(prometheus::BuildGauge()
                    .Name("rolter_config_version")
                    .Help("Version of the config snapshot being served")
                    .Register(r)
                    .Add({})),
        auth_failures(prometheus::BuildCounter()
                          .Name("rolter_auth_failures_total")
                          .Help("Requests refused for a missing or invalid API key, by reason")
                          .Register(r)),
        limit_refusals(prometheus::BuildCounter()
                           .Name("rolter_limit_refusals_total")
                           .Help("Requests refused by their key's limits (rate_limit, budget, "
                                 "unavailable), or admitted while the backend was away "
                                 "(backend_open)")
                           .Register(r)),
        limit_backend_errors(prometheus::BuildCounter()
                                 .Name("rolter_limit_backend_errors_total")
                                 .Help("Admissions and settlements the limits backend failed")
                                 .Register(r)
                                 .Add({})),
        key_requests(prometheus::BuildCounter()
                         .Name("rolter_key_requests_total")
                         .Help("Answered requests per key ([metrics] per_key)")
                         .Register(r)),
        key_tokens(prometheus::BuildCounter()
                       .Name("rolter_key_tokens_total")
                       .Help("Tokens per key and direction ([metrics] per_key)")
                       .Register(r)),
        key_spend(prometheus::BuildCounter()
                      .Name("rolter_key_spend_usd_total")
                      .Help("Spend per key at catalog prices, USD ([metrics] per_key)")
                      .Register(r)),
        accept_errors(prometheus::BuildCounter()
                          .Name("rolter_accept_errors_total")
                          .Help("Failed accepts on the listener (emfile, enfile, other)")
                          .Register(r)),
        connections(prometheus::BuildGauge()
                        .Name("rolter_connections")
                        .Help("Open client connections")
                        .Register(r)
                        .Add({})),
        engine_load(prometheus::BuildGauge()
                        .Name("rolter_engine_load")
                        .Help("Requests running plus waiting on the engine at its last good scrape "
                              "of /metrics")
                        .Register(r)),
        engine_fresh(
            prometheus::BuildGauge()
                .Name("rolter_engine_load_fresh")
                .Help("1 while the engine's scraped load is fresh and used for balancing; "
                      "0 when the last scrape failed or is stale (local in-flight is used)")
                .Register(r)),
        engine_cache(prometheus::BuildGauge()
                         .Name("rolter_engine_gpu_cache_usage_ratio")
                         .Help("The engine's KV-cache usage (0 to 1) at its last good scrape")
                         .Register(r)),
        engine_prefix_queries(
            prometheus::BuildCounter()
                .Name("rolter_engine_prefix_cache_queries_total")
                .Help("Prompt tokens the engine looked up in its prefix cache, as its /metrics "
                      "counts them (vllm:prefix_cache_queries_total), since rolter's first scrape")
                .Register(r)),
        engine_prefix_hits(prometheus::BuildCounter()
                               .Name("rolter_engine_prefix_cache_hits_total")
                               .Help("Prompt tokens the engine found in its prefix cache "
                                     "(vllm:prefix_cache_hits_total), since rolter's first scrape")
                               .Register(r)),
        engine_failures(prometheus::BuildCounter()
                            .Name("rolter_engine_scrape_failures_total")
                            .Help("Scrapes of the engine's /metrics that failed (connect, timeout, "
                                  "status, or a metric missing or unreadable)")
                            .Register(r)),
        kv_state(prometheus::BuildGauge()
                     .Name("rolter_kv_events_state")
                     .Help("The endpoint's KV-event stream, as a state set: 1 for its state "
                           "(disconnected, live, stale, gap not yet repaired), 0 for the others; "
                           "only live is used for scoring")
                     .Register(r)),
        kv_events(prometheus::BuildCounter()
                      .Name("rolter_kv_events_total")
                      .Help("KV events decoded from the endpoint's stream and applied to its index")
                      .Register(r)),
        kv_gaps(prometheus::BuildCounter()
                    .Name("rolter_kv_event_gaps_total")
                    .Help("Sequence gaps in the endpoint's KV-event stream")
                    .Register(r)),
        kv_decode_errors(prometheus::BuildCounter()
                             .Name("rolter_kv_event_decode_errors_total")
                             .Help("KV-event messages that could not be read, and were skipped")
                             .Register(r)),
        lmcache_occupancy(
            prometheus::BuildGauge()
                .Name("rolter_lmcache_occupancy_ratio")
                .Help("The endpoint's LMCache occupancy (0 to 1) at its last good poll, while "
                      "lmcache_aware may use it; NaN when the poll failed, is stale or the cache "
                      "is unavailable")
                .Register(r)),
        lmcache_failures(prometheus::BuildCounter()
                             .Name("rolter_lmcache_poll_failures_total")
                             .Help("Polls of the endpoint's LMCache endpoint that failed (connect, "
                                   "timeout, status, or an unreadable body)")
                             .Register(r)),
        tokenize(prometheus::BuildHistogram()
                     .Name("rolter_tokenize_seconds")
                     .Help("Calls to an engine's POST /tokenize for a request's token ids, by "
                           "provider and outcome (ok, timeout, error)")
                     .Register(r)),
        decision_requests(prometheus::BuildCounter()
                              .Name("rolter_decision_service_requests_total")
                              .Help("Calls to a policy route's decision service, by route and "
                                    "outcome (ok, timeout, error, status, invalid)")
                              .Register(r)),
        disaggregation(prometheus::BuildCounter()
                           .Name("rolter_disaggregation_total")
                           .Help("Requests of a disaggregated route, by the path they took "
                                 "(disaggregated, aggregated, prefill_failed) and where their "
                                 "uncached prompt count came from (kv_index, tokens, bytes)")
                           .Register(r)),
        decision_seconds(prometheus::BuildHistogram()
                             .Name("rolter_decision_service_seconds")
                             .Help("Duration of the calls to a policy route's decision service, "
                                   "by route")
                             .Register(r)),
        adaptive_score(prometheus::BuildGauge()
                           .Name("rolter_adaptive_routing_target_score")
                           .Help("An adaptive route's blended latency x cost x load score of each "
                                 "target (higher is better), at the last telemetry sample")
                           .Register(r)),
        adaptive_decisions(prometheus::BuildCounter()
                               .Name("rolter_adaptive_routing_decisions_total")
                               .Help("An adaptive route's picks, by decision: blend, exploration, "
                                     "probe (warm-up), fallback (the pipeline stack)")
                               .Register(r)),
        adaptive_target_picks(prometheus::BuildCounter()
                                  .Name("rolter_adaptive_routing_target_picks_total")
                                  .Help("An adaptive route's picks of each target, by decision")
                                  .Register(r)),
        adaptive_posts(prometheus::BuildCounter()
                           .Name("rolter_adaptive_telemetry_posts_total")
                           .Help("Adaptive-routing telemetry posts to the control plane, by "
                                 "result (ok, error)")
                           .Register(r)),
        snapshot_fetches(prometheus::BuildCounter()
                             .Name("rolter_snapshot_fetches_total")
                             .Help("Polls of the control plane for a snapshot, by result (updated, "
                                   "not_modified, rejected, error)")
                             .Register(r)),
        snapshot_version(
            prometheus::BuildGauge()
                .Name("rolter_snapshot_version")
                .Help("Version of the control plane's snapshot being served (0 = none)")
                .Register(r)),
        control_plane_up(
            prometheus::BuildGauge()
                .Name("rolter_control_plane_up")
                .Help("1 after an answered poll of the control plane, 0 after a failed one")
                .Register(r)),
        shared_prefixes(prometheus::BuildCounter()
                            .Name("rolter_shared_prefix_entries_total")
                            .Help("Prefix insertions shared with the other gateway nodes through "
                                  "the [shared_state] stream, by direction (sent, received)")
                            .Register(r)),
        shared_state_up(prometheus::BuildGauge()
                            .Name("rolter_shared_state_up")
                            .Help("1 while the [shared_state] stream is reachable, 0 when not")
                            .Register(r)),
        discovery_lookups(prometheus::BuildCounter()
                              .Name("rolter_discovery_lookups_total")
                              .Help("DNS lookups of a discovered provider's endpoints, by "
                                    "outcome (ok, failed: the last good set is kept)")
                              .Register(r)),
        discovery_endpoints(prometheus::BuildGauge()
                                .Name("rolter_discovery_endpoints")
                                .Help("Endpoints of a discovered provider, as its last good "
                                      "lookup found them")
                                .Register(r)) {}

  prometheus::Family<prometheus::Counter>& requests;
  prometheus::Family<prometheus::Counter>& requests_by_code;
  prometheus::Family<prometheus::Histogram>& duration;
  prometheus::Family<prometheus::Histogram>& ttft;
  prometheus::Family<prometheus::Histogram>& inter_token;
  prometheus::Family<prometheus::Histogram>& target_duration;
  prometheus::Family<prometheus::Histogram>& target_ttft;
  prometheus::Family<prometheus::Counter>& picks;
  prometheus::Family<prometheus::Counter>& retries;
  prometheus::Family<prometheus::Counter>& tokens;
  prometheus::Family<prometheus::Counter>& parks;
  prometheus::Family<prometheus::Counter>& fallbacks;
  prometheus::Family<prometheus::Gauge>& route_endpoints;
  prometheus::Family<prometheus::Gauge>& route_available;
  prometheus::Family<prometheus::Gauge>& in_flight;
  prometheus::Family<prometheus::Gauge>& breaker;
  prometheus::Family<prometheus::Gauge>& healthy;
  prometheus::Family<prometheus::Gauge>& parked;
  prometheus::Family<prometheus::Counter>& reloads;
  prometheus::Counter& reload_errors;
  prometheus::Gauge& version;
  prometheus::Family<prometheus::Counter>& auth_failures;
  prometheus::Family<prometheus::Counter>& limit_refusals;
  prometheus::Counter& limit_backend_errors;
  prometheus::Family<prometheus::Counter>& key_requests;
  prometheus::Family<prometheus::Counter>& key_tokens;
  prometheus::Family<prometheus::Counter>& key_spend;
  prometheus::Family<prometheus::Counter>& accept_errors;
  prometheus::Gauge& connections;
  prometheus::Family<prometheus::Gauge>& engine_load;
  prometheus::Family<prometheus::Gauge>& engine_fresh;
  prometheus::Family<prometheus::Gauge>& engine_cache;
  prometheus::Family<prometheus::Counter>& engine_prefix_queries;
  prometheus::Family<prometheus::Counter>& engine_prefix_hits;
  prometheus::Family<prometheus::Counter>& engine_failures;
  prometheus::Family<prometheus::Gauge>& kv_state;
  prometheus::Family<prometheus::Counter>& kv_events;
  prometheus::Family<prometheus::Counter>& kv_gaps;
  prometheus::Family<prometheus::Counter>& kv_decode_errors;
  prometheus::Family<prometheus::Gauge>& lmcache_occupancy;
  prometheus::Family<prometheus::Counter>& lmcache_failures;
  prometheus::Family<prometheus::Histogram>& tokenize;
  prometheus::Family<prometheus::Counter>& decision_requests;
  prometheus::Family<prometheus::Counter>& disaggregation;
  prometheus::Family<prometheus::Histogram>& decision_seconds;
  prometheus::Family<prometheus::Gauge>& adaptive_score;
  // Synced at scrape time under the series table's lock, so two concurrent scrapes never both
  // add the same difference.
  prometheus::Family<prometheus::Counter>& adaptive_decisions;
  prometheus::Family<prometheus::Counter>& adaptive_target_picks;
  prometheus::Family<prometheus::Counter>& adaptive_posts;
  prometheus::Family<prometheus::Counter>& snapshot_fetches;
  prometheus::Family<prometheus::Gauge>& snapshot_version;
  prometheus::Family<prometheus::Gauge>& control_plane_up;
  prometheus::Family<prometheus::Counter>& shared_prefixes;
  prometheus::Family<prometheus::Gauge>& shared_state_up;
  prometheus::Family<prometheus::Counter>& discovery_lookups;
  prometheus::Family<prometheus::Gauge>& discovery_endpoints;
};

Metrics::Metrics(unsigned workers)
    : registry_(std::make_shared<prometheus::Registry>()),
      table_(std::make_shared<SeriesTable>(
          registry_, workers != 0 ? workers : std::max(1u, std::thread::hardware_concurrency()))),
      families_(std::make_unique<Families>(*registry_)) {}

Metrics::~Metrics() = default;

Metrics::RouteInstruments Metrics::route(std::string_view route, SeriesLease& lease) {
  Families& f = *families_;
  SeriesTable& t = *table_;
  const prometheus::Labels labels = {{"route", std::string(route)}};
  // Set by render() from the FleetView's routes.
  t.lease(f.route_endpoints, labels, lease);
  t.lease(f.route_available, labels, lease);
  return RouteInstruments{
      .duration = &t.lease_sharded(f.duration, labels, lease, latency_buckets()),
      .ttft = &t.lease_sharded(f.ttft, labels, lease, latency_buckets()),
      .inter_token = &t.lease_sharded(f.inter_token, labels, lease, inter_token_buckets()),
      .retries = &t.lease_sharded(f.retries, labels, lease),
      .tokens_in =
          &t.lease_sharded(f.tokens, {{"route", std::string(route)}, {"direction", "in"}}, lease),
      .tokens_out =
          &t.lease_sharded(f.tokens, {{"route", std::string(route)}, {"direction", "out"}}, lease),
  };
}

Metrics::CandidateInstruments Metrics::candidate(std::string_view route, std::string_view strategy,
                                                 std::string_view target, SeriesLease& lease) {
  Families& f = *families_;
  SeriesTable& t = *table_;
  CandidateInstruments c;
  c.picks = &t.lease_sharded(f.picks,
                             {{"route", std::string(route)},
                              {"strategy", std::string(strategy)},
                              {"target", std::string(target)}},
                             lease);
  for (size_t i = 0; i < kCodeClasses.size(); ++i) {
    c.responses[i] = &t.lease_sharded(f.requests,
                                      {{"route", std::string(route)},
                                       {"target", std::string(target)},
                                       {"code_class", kCodeClasses[i]}},
                                      lease);
  }
  for (size_t i = 0; i < c.codes.size(); ++i) {
    const std::string code = i < kCountedCodes.size() ? std::to_string(kCountedCodes[i]) : "other";
    c.codes[i] = &t.lease_sharded(f.requests_by_code,
                                  {{"route", std::string(route)}, {"code", code}}, lease);
  }
  const prometheus::Labels labels = {{"route", std::string(route)},
                                     {"target", std::string(target)}};
  c.duration = &t.lease_sharded(f.target_duration, labels, lease, latency_buckets());
  c.ttft = &t.lease_sharded(f.target_ttft, labels, lease, latency_buckets());
  return c;
}

Metrics::EndpointInstruments Metrics::endpoint(std::string_view endpoint, SeriesLease& lease) {
  Families& f = *families_;
  SeriesTable& t = *table_;
  const prometheus::Labels labels = endpoint_labels(endpoint);
  // Set by render() from the FleetView before each exposition.
  t.lease(f.in_flight, labels, lease);
  t.lease(f.healthy, labels, lease);
  t.lease(f.parked, labels, lease);
  for (const std::string_view state : kBreakerStateNames) {
    t.lease(f.breaker, {{"endpoint", std::string(endpoint)}, {"state", std::string(state)}},
            lease);
  }
  EndpointInstruments e;
  for (size_t i = 0; i < kParkReasons.size(); ++i) {
    e.parks[i] = &t.lease(
        f.parks, {{"endpoint", std::string(endpoint)}, {"reason", kParkReasons[i]}}, lease);
  }
  return e;
}

prometheus::Counter* Metrics::fallback(std::string_view route, std::string_view to,
                                       SeriesLease& lease) {
  return &table_->lease(families_->fallbacks,
                        {{"route", std::string(route)}, {"to", std::string(to)}}, lease);
}

void Metrics::adaptive_route(std::string_view route, SeriesLease& lease) {
  for (const char* decision : kAdaptiveDecisions) {
    table_->lease(families_->adaptive_decisions,
                  {{"route", std::string(route)}, {"decision", decision}}, lease);
  }
}

void Metrics::adaptive_target(std::string_view route, std::string_view target,
                              std::string_view scored_as, SeriesLease& lease) {
  for (const char* decision : kAdaptiveDecisions) {
    table_->lease(
        families_->adaptive_target_picks,
        {{"route", std::string(route)}, {"target", std::string(target)}, {"decision", decision}},
        lease);
  }
  table_->lease(families_->adaptive_score,
                {{"route", std::string(route)}, {"target", std::string(scored_as)}}, lease);
}

Metrics::EngineInstruments Metrics::engine(std::string_view endpoint, SeriesLease& lease) {
  Families& f = *families_;
  SeriesTable& t = *table_;
  const prometheus::Labels labels = endpoint_labels(endpoint);
  // engine_load and engine_load_fresh are set by render(), which shows them for every endpoint
  // whose engine_load_fresh series exists.
  t.lease(f.engine_load, labels, lease);
  t.lease(f.engine_fresh, labels, lease);
  return EngineInstruments{
      .gpu_cache_usage = &t.lease(f.engine_cache, labels, lease),
      .scrape_failures = &t.lease(f.engine_failures, labels, lease),
      .prefix_cache_queries = &t.lease(f.engine_prefix_queries, labels, lease),
      .prefix_cache_hits = &t.lease(f.engine_prefix_hits, labels, lease),
  };
}

Metrics::KvEventInstruments Metrics::kv_events(std::string_view endpoint, SeriesLease& lease) {
  Families& f = *families_;
  SeriesTable& t = *table_;
  const prometheus::Labels labels = endpoint_labels(endpoint);
  KvEventInstruments k;
  for (size_t i = 0; i < kKvStateNames.size(); ++i) {
    k.state[i] = &t.lease(
        f.kv_state, {{"endpoint", std::string(endpoint)}, {"state", std::string(kKvStateNames[i])}},
        lease);
  }
  k.events = &t.lease(f.kv_events, labels, lease);
  k.gaps = &t.lease(f.kv_gaps, labels, lease);
  k.decode_errors = &t.lease(f.kv_decode_errors, labels, lease);
  return k;
}

Metrics::LmcacheInstruments Metrics::lmcache(std::string_view endpoint, SeriesLease& lease) {
  const prometheus::Labels labels = endpoint_labels(endpoint);
  // Set by render() from the FleetView (NaN while lmcache_aware may not use it).
  table_->lease(families_->lmcache_occupancy, labels, lease);
  return LmcacheInstruments{.poll_failures =
                                &table_->lease(families_->lmcache_failures, labels, lease)};
}

Metrics::TokenizeInstruments Metrics::tokenize(std::string_view provider, SeriesLease& lease) {
  TokenizeInstruments t{};
  for (size_t i = 0; i < kTokenizeOutcomes.size(); ++i) {
    t[i] = &table_->lease_sharded(
        families_->tokenize,
        {{"provider", std::string(provider)}, {"outcome", kTokenizeOutcomes[i]}}, lease,
        tokenize_buckets());
  }
  return t;
}

Metrics::DecisionInstruments Metrics::decision(std::string_view route, SeriesLease& lease) {
  DecisionInstruments d;
  for (size_t i = 0; i < kDecisionOutcomes.size(); ++i) {
    d.requests[i] = &table_->lease_sharded(
        families_->decision_requests,
        {{"route", std::string(route)}, {"outcome", kDecisionOutcomes[i]}}, lease);
  }
  d.seconds = &table_->lease_sharded(families_->decision_seconds, {{"route", std::string(route)}},
                                     lease, decision_buckets());
  return d;
}

Metrics::DisaggregationInstruments Metrics::disaggregation(std::string_view route,
                                                           SeriesLease& lease) {
  DisaggregationInstruments d{};
  for (size_t p = 0; p < kSplitPaths.size(); ++p) {
    for (size_t c = 0; c < kSplitCounts.size(); ++c) {
      d[p][c] = &table_->lease_sharded(
          families_->disaggregation,
          {{"route", std::string(route)}, {"path", kSplitPaths[p]}, {"count", kSplitCounts[c]}},
          lease);
    }
  }
  return d;
}

void Metrics::auth_failure(std::string_view reason) {
  families_->auth_failures.Add({{"reason", std::string(reason)}}).Increment();
}

void Metrics::limit_refusal(std::string_view reason) {
  families_->limit_refusals.Add({{"reason", std::string(reason)}}).Increment();
}

void Metrics::limit_backend_error() { families_->limit_backend_errors.Increment(); }

void Metrics::key_usage(std::string_view key, std::string_view team, uint64_t input_tokens,
                        uint64_t output_tokens, double usd) {
  const std::string k(key);
  const std::string t(team);
  families_->key_requests.Add({{"key", k}, {"team", t}}).Increment();
  families_->key_tokens.Add({{"key", k}, {"team", t}, {"direction", "input"}})
      .Increment(static_cast<double>(input_tokens));
  families_->key_tokens.Add({{"key", k}, {"team", t}, {"direction", "output"}})
      .Increment(static_cast<double>(output_tokens));
  families_->key_spend.Add({{"key", k}, {"team", t}}).Increment(usd);
}

void Metrics::accept_error(std::string_view reason) {
  families_->accept_errors.Add({{"reason", std::string(reason)}}).Increment();
}

void Metrics::connections_changed(int delta) { families_->connections.Increment(delta); }

void Metrics::set_build_info(std::string_view version, std::string_view commit,
                             std::string_view build_type) {
  // Registered on first use: a Metrics that no binary describes (a unit test's) renders without
  // it. Registering an existing name returns that family, so a second call adds a second series.
  auto& family = prometheus::BuildGauge()
                     .Name("rolter_build_info")
                     .Help("1, labelled with the version, commit and build type of this binary")
                     .Register(*registry_);
  family
      .Add({{"version", std::string(version)},
            {"commit", std::string(commit)},
            {"build_type", std::string(build_type)}})
      .Set(1);
}

void Metrics::config_reload(bool ok, uint64_t version) {
  families_->reloads.Add({{"result", ok ? "ok" : "error"}}).Increment();
  if (ok) {
    families_->version.Set(static_cast<double>(version));
  } else {
    families_->reload_errors.Increment();
  }
}

void Metrics::count_pick(const CandidateInstruments& c) { count(c.picks); }

void Metrics::count_response(const CandidateInstruments& c, unsigned status) {
  const size_t index = status >= 100 && status < 600 ? status / 100 : 0;
  count(c.responses[index]);
  size_t code = kCountedCodes.size();  // "other"
  for (size_t i = 0; i < kCountedCodes.size(); ++i) {
    if (kCountedCodes[i] == status) code = i;
  }
  count(c.codes[code]);
}

void Metrics::count_retry(const RouteInstruments& r) { count(r.retries); }

void Metrics::count_tokens(const RouteInstruments& r, std::optional<uint64_t> in,
                           std::optional<uint64_t> out) {
  if (in && r.tokens_in != nullptr) r.tokens_in->add(*in);
  if (out && r.tokens_out != nullptr) r.tokens_out->add(*out);
}

void Metrics::count_park(const EndpointInstruments& e, ParkReason reason) {
  count(e.parks[static_cast<size_t>(reason)]);
}

void Metrics::count(prometheus::Counter* counter) {
  if (counter != nullptr) counter->Increment();
}

void Metrics::count(ShardedCounter* counter) {
  if (counter != nullptr) counter->add();
}

void Metrics::observe_seconds(ShardedHistogram* h, double seconds) {
  if (h != nullptr) h->observe(seconds);
}

void Metrics::observe_tokenize(const TokenizeInstruments& t, TokenizeOutcome outcome,
                               double seconds) {
  observe_seconds(t[static_cast<size_t>(outcome)], seconds);
}

void Metrics::observe_decision(const DecisionInstruments& d, DecisionOutcome outcome,
                               double seconds) {
  count(d.requests[static_cast<size_t>(outcome)]);
  observe_seconds(d.seconds, seconds);
}

void Metrics::count_split(const DisaggregationInstruments& d, SplitPath path, size_t count) {
  if (count < kSplitCounts.size()) Metrics::count(d[static_cast<size_t>(path)][count]);
}

void Metrics::count_engine_scrape(const EngineInstruments& e, const EngineScrape& scrape) {
  if (!scrape.ok) {
    count(e.scrape_failures);
    return;
  }
  if (scrape.gpu_cache_usage && e.gpu_cache_usage != nullptr) {
    e.gpu_cache_usage->Set(*scrape.gpu_cache_usage);
  }
  if (scrape.prefix_cache_queries > 0 && e.prefix_cache_queries != nullptr) {
    e.prefix_cache_queries->Increment(scrape.prefix_cache_queries);
  }
  if (scrape.prefix_cache_hits > 0 && e.prefix_cache_hits != nullptr) {
    e.prefix_cache_hits->Increment(scrape.prefix_cache_hits);
  }
}

namespace {

// A Counter cannot be set, only increased: brings it up to `total` (the atomics only grow).
void sync_counter(prometheus::Counter& counter, double total) {
  if (total > counter.Value()) counter.Increment(total - counter.Value());
}

}  // namespace

void Metrics::sync_kv_events(const KvEventInstruments& k, const KvEventCounts& counts) {
  for (size_t i = 0; i < k.state.size(); ++i) {
    if (k.state[i] != nullptr) k.state[i]->Set(i == counts.state ? 1 : 0);
  }
  if (k.events != nullptr) sync_counter(*k.events, static_cast<double>(counts.events));
  if (k.gaps != nullptr) sync_counter(*k.gaps, static_cast<double>(counts.gaps));
  if (k.decode_errors != nullptr) {
    sync_counter(*k.decode_errors, static_cast<double>(counts.decode_errors));
  }
}

void Metrics::count_lmcache_failure(const LmcacheInstruments& l) { count(l.poll_failures); }

Metrics::SnapshotFollowerInstruments Metrics::snapshot_follower() {
  static constexpr std::array<const char*, 4> kResults = {"updated", "not_modified", "rejected",
                                                          "error"};
  SnapshotFollowerInstruments s;
  for (size_t i = 0; i < kResults.size(); ++i) {
    s.fetches[i] = &families_->snapshot_fetches.Add({{"result", kResults[i]}});
  }
  s.version = &families_->snapshot_version.Add({});
  s.up = &families_->control_plane_up.Add({});
  s.up->Set(0);
  return s;
}

void Metrics::count_snapshot_fetch(const SnapshotFollowerInstruments& s, SnapshotFetch outcome) {
  count(s.fetches[static_cast<size_t>(outcome)]);
  if (s.up != nullptr) s.up->Set(outcome == SnapshotFetch::kError ? 0 : 1);
}

void Metrics::count_shared_prefixes(uint64_t sent, uint64_t received) {
  families_->shared_prefixes.Add({{"direction", "sent"}}).Increment(static_cast<double>(sent));
  families_->shared_prefixes.Add({{"direction", "received"}})
      .Increment(static_cast<double>(received));
}

void Metrics::set_shared_state_up(bool up) { families_->shared_state_up.Add({}).Set(up ? 1 : 0); }

void Metrics::discovery_lookup(std::string_view provider, bool ok, size_t endpoints) {
  families_->discovery_lookups
      .Add({{"provider", std::string(provider)}, {"outcome", ok ? "ok" : "failed"}})
      .Increment();
  families_->discovery_endpoints.Add({{"provider", std::string(provider)}})
      .Set(static_cast<double>(endpoints));
}

void Metrics::set_adaptive_score(std::string_view route, std::string_view target, double score) {
  const prometheus::Labels labels = {{"route", std::string(route)},
                                     {"target", std::string(target)}};
  table_->with_lock([&] {
    if (families_->adaptive_score.Has(labels)) families_->adaptive_score.Add(labels).Set(score);
  });
}

void Metrics::count_adaptive_telemetry_post(bool ok) {
  families_->adaptive_posts.Add({{"result", ok ? "ok" : "error"}}).Increment();
}

std::vector<prometheus::MetricFamily> Metrics::collect() {
  table_->fold();
  return registry_->Collect();
}

std::string Metrics::render(const FleetView& fleet) {
  refresh(fleet);
  std::vector<prometheus::MetricFamily> families = registry_->Collect();
  for (auto& family : collect_process_metrics()) families.push_back(std::move(family));
  return prometheus::TextSerializer().Serialize(families);
}

namespace {

// What refresh() read from the fleet, copied so that the fleet's locks and the series table's are
// never held together.
struct AdaptiveRow {
  prometheus::Labels labels;
  bool route_total = false;
  double total = 0;
};
struct EndpointRow {
  std::string endpoint;
  InstanceReading reading;
};

}  // namespace

void Metrics::refresh(const FleetView& fleet) {
  table_->fold();
  std::vector<AdaptiveRow> adaptive;
  fleet.for_each_adaptive_picks([&](const AdaptivePicksReading& r) {
    AdaptiveRow row{.route_total = r.target.empty(), .total = static_cast<double>(r.total)};
    row.labels = {{"route", std::string(r.route)}, {"decision", std::string(r.decision)}};
    if (!r.target.empty()) row.labels.emplace("target", std::string(r.target));
    adaptive.push_back(std::move(row));
  });
  std::vector<std::pair<std::string, RouteReading>> routes;
  fleet.for_each_route([&](const RouteReading& r) {
    routes.emplace_back(std::string(r.route), r);
    routes.back().second.route = {};  // valid only during the callback
  });
  std::vector<EndpointRow> endpoints;
  fleet.for_each_instance([&](const InstanceReading& r) {
    endpoints.push_back({.endpoint = std::string(r.instance), .reading = r});
    endpoints.back().reading.instance = {};  // valid only during the callback
  });
  Families& f = *families_;
  // Only series a lease holds are set: an endpoint or route no snapshot names stays out.
  table_->with_lock([&] {
    for (const AdaptiveRow& row : adaptive) {
      auto& family = row.route_total ? f.adaptive_decisions : f.adaptive_target_picks;
      if (family.Has(row.labels)) sync_counter(family.Add(row.labels), row.total);
    }
    for (const auto& [route, r] : routes) {
      const prometheus::Labels labels = {{"route", route}};
      if (!f.route_endpoints.Has(labels)) continue;
      f.route_endpoints.Add(labels).Set(r.endpoints);
      f.route_available.Add(labels).Set(r.available);
    }
    for (const EndpointRow& row : endpoints) {
      const InstanceReading& r = row.reading;
      const prometheus::Labels labels = endpoint_labels(row.endpoint);
      if (f.in_flight.Has(labels)) {
        f.in_flight.Add(labels).Set(r.in_flight);
        f.healthy.Add(labels).Set(r.healthy ? 1 : 0);
        f.parked.Add(labels).Set(r.parked ? 1 : 0);
        for (size_t i = 0; i < kBreakerStateNames.size(); ++i) {
          f.breaker.Add({{"endpoint", row.endpoint}, {"state", std::string(kBreakerStateNames[i])}})
              .Set(i == r.breaker ? 1 : 0);
        }
      }
      if (f.engine_fresh.Has(labels)) {
        f.engine_load.Add(labels).Set(r.engine_load);
        f.engine_fresh.Add(labels).Set(r.engine_fresh ? 1 : 0);
      }
      if (f.lmcache_occupancy.Has(labels)) {
        f.lmcache_occupancy.Add(labels).Set(
            r.lmcache_occupancy.value_or(std::numeric_limits<double>::quiet_NaN()));
      }
    }
  });
}

}  // namespace rolter
