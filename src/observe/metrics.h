// Metrics: the gateway's Prometheus metrics (SPEC §9, §17), rendered at GET /metrics. Every series,
// its labels and its meaning are listed in docs/metrics.md.
//
// One Metrics object lives for the whole process, like the LoadTracker, so counters survive
// reloads. A snapshot asks it once per route, candidate and endpoint for the instruments it will
// touch, and keeps the raw pointers: on the request path an update is an atomic add on a
// pre-built series, never a label lookup. Those series are leased (observe/series_lease.h): the
// snapshot and the background services hold leases on what they use, and a series nobody holds
// any more (its route, target or endpoint was removed by a reload, and the last request pinned to
// the old snapshot has ended) is deleted from /metrics.
//
// Per-endpoint state (in flight, breaker, health, parking, engine load) is read at scrape time from
// a FleetView (observe/fleet_view.h), which the LoadTracker implements: observe/ includes nothing
// of the fleet's. Only endpoints some lease holds are shown.
//
// Naming (SPEC §17): every series is prefixed rolter_ (but the standard process_* ones); an
// endpoint (one instance of a provider, "<provider>@<base_url>") is labelled `endpoint`, never
// `instance`, which Prometheus sets to the scrape target; a route (or group or pin address) is
// labelled `route`; a status class is `code_class` ("2xx"), an exact status `code`; fractions end
// in _ratio; 0/1 gauges read as a yes/no question (_up, _healthy, _parked, _fresh); an enumerated
// state is a state set, one series per state labelled `state`, 1 for the current one and 0 for
// the others; durations are histograms in seconds.
//
// Families (all prefixed rolter_):
//   requests_total{route,target,code_class}  responses sent, by status class (1xx..5xx, other)
//   requests_by_code_total{route,code}      the same by exact status, for the statuses in
//                                           kCountedCodes ("other" for the rest)
//   request_duration_seconds{route}         whole request, histogram
//   ttft_seconds{route}                     first content event of a stream (the response
//                                           head when not streamed), histogram
//   inter_token_seconds{route}              time between a stream's content events, histogram
//   target_duration_seconds{route,target}, target_ttft_seconds{route,target}
//   picks_total{route,strategy,target}      balancer picks that were tried
//   retries_total{route}                    attempts after the first
//   tokens_total{route,direction}           prompt (in) and generated (out) tokens, as the
//                                           upstream reported them in its usage (streams too)
//   parks_total{endpoint,reason}            endpoints parked (429, refused)
//   fallbacks_total{route,to}               requests handed from a route that could not answer
//                                           to its next fallback route (SPEC §16)
//   route_endpoints{route}, route_endpoints_available{route}
//                                           a route's endpoints, and those that may take a
//                                           request now (0: every candidate is out)
//   in_flight{endpoint}, endpoint_healthy{endpoint}, endpoint_parked{endpoint},
//   breaker_state{endpoint,state}           state set: closed, open, half_open
//   config_reloads_total{result}, config_reload_errors_total, config_version
//   auth_failures_total{reason}, limit_refusals_total{reason}, limit_backend_errors_total
//   key_requests_total{key,team}, key_tokens_total{key,team,direction},
//   key_spend_usd_total{key,team}           with [metrics] per_key = true
//   accept_errors_total{reason}, connections
//   engine_load{endpoint}, engine_load_fresh{endpoint}, engine_gpu_cache_usage_ratio{endpoint},
//   engine_prefix_cache_queries_total{endpoint}, engine_prefix_cache_hits_total{endpoint},
//   engine_scrape_failures_total{endpoint}  from the engine's /metrics (load_source =
//                                           "engine_metrics")
//   kv_events_state{endpoint,state}         state set: disconnected, live, stale, gap
//   kv_events_total{endpoint}, kv_event_gaps_total{endpoint},
//   kv_event_decode_errors_total{endpoint}
//   lmcache_occupancy_ratio{endpoint}, lmcache_poll_failures_total{endpoint}
//   tokenize_seconds{provider,outcome}
//   decision_service_requests_total{route,outcome}, decision_service_seconds{route}
//   disaggregation_total{route,path,count}  a disaggregated route's requests: path disaggregated,
//                                           aggregated (below min_uncached_tokens) or
//                                           prefill_failed (served whole after step 1 failed);
//                                           count kv_index, tokens or bytes (SPEC §18)
//   adaptive_routing_target_score{route,target}, adaptive_routing_decisions_total{route,decision},
//   adaptive_routing_target_picks_total{route,target,decision}
//   adaptive_telemetry_posts_total{result}
//   snapshot_fetches_total{result}, snapshot_version, control_plane_up
//   shared_prefix_entries_total{direction}, shared_state_up
//   discovery_lookups_total{provider,outcome}, discovery_endpoints{provider}
//   build_info{version,commit,build_type}
// and process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
// process_open_fds, process_max_fds, process_start_time_seconds (observe/process_metrics.h).
//
// The request path's counters and histograms (the route's, a candidate's, the tokenize, decision
// and disaggregation ones) are sharded per worker (observe/sharded_series.h): a worker adds to
// cells of its own, with no lock and no cache line shared with another worker, and render() and
// refresh() fold what they gained into the Prometheus series first.
//
// Thread-safety: all methods may be called from any thread. Sharded updates are relaxed adds on
// the calling worker's cells; the other counters are atomic.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <prometheus/metric_family.h>

#include "observe/fleet_view.h"
#include "observe/series_lease.h"

namespace prometheus {
class Counter;
class Gauge;
class Histogram;
class Registry;
}  // namespace prometheus

namespace rolter {

class SeriesTable;
class ShardedCounter;
class ShardedHistogram;

// The `state` label values of breaker_state and kv_events_state, by the numbers FleetView and
// KvEventCounts carry (InstanceReading::breaker, KvStreamState).
inline constexpr std::array<std::string_view, 3> kBreakerStateNames = {"closed", "open",
                                                                       "half_open"};
inline constexpr std::array<std::string_view, 4> kKvStateNames = {"disconnected", "live", "stale",
                                                                  "gap"};

class Metrics {
 public:
  // Status classes 1xx..5xx; index 0 counts anything else (e.g. a response never sent).
  using StatusCounters = std::array<ShardedCounter*, 6>;
  // The statuses requests_by_code_total counts one by one: what clients of an LLM gateway meet
  // (and 499, a client that left). Any other is counted as "other", so a route has at most
  // kCountedCodes.size() + 1 of these series whatever its upstreams answer.
  static constexpr std::array<unsigned, 14> kCountedCodes = {200, 400, 401, 403, 404, 408, 413,
                                                             422, 429, 499, 500, 502, 503, 504};
  // Indexed like kCountedCodes; the last one is "other".
  using CodeCounters = std::array<ShardedCounter*, kCountedCodes.size() + 1>;

  struct RouteInstruments {
    ShardedHistogram* duration = nullptr;
    ShardedHistogram* ttft = nullptr;
    ShardedHistogram* inter_token = nullptr;
    ShardedCounter* retries = nullptr;
    ShardedCounter* tokens_in = nullptr;
    ShardedCounter* tokens_out = nullptr;
  };
  struct CandidateInstruments {
    ShardedCounter* picks = nullptr;
    StatusCounters responses{};
    CodeCounters codes{};  // the route's, shared by its candidates
    // Per target, for the dashboard's per-target percentiles; a target's instances share them.
    ShardedHistogram* duration = nullptr;
    ShardedHistogram* ttft = nullptr;
  };
  enum class ParkReason { kRefused, kRateLimited };
  struct EndpointInstruments {
    std::array<prometheus::Counter*, 2> parks{};  // indexed by ParkReason
  };
  struct EngineInstruments {
    prometheus::Gauge* gpu_cache_usage = nullptr;
    prometheus::Counter* scrape_failures = nullptr;
    prometheus::Counter* prefix_cache_queries = nullptr;
    prometheus::Counter* prefix_cache_hits = nullptr;
  };
  // One scrape of an engine's /metrics, as the scraper read it.
  struct EngineScrape {
    bool ok = false;
    std::optional<double> gpu_cache_usage;  // 0..1
    // What the engine's prefix-cache counters (in tokens) gained since its last good scrape.
    double prefix_cache_queries = 0;
    double prefix_cache_hits = 0;
  };
  struct KvEventInstruments {
    std::array<prometheus::Gauge*, kKvStateNames.size()> state{};  // the state set
    prometheus::Counter* events = nullptr;
    prometheus::Counter* gaps = nullptr;
    prometheus::Counter* decode_errors = nullptr;
  };
  // What an instance's KV-event stream has done so far (the KvResidency's atomics).
  struct KvEventCounts {
    uint8_t state = 0;
    uint64_t events = 0;
    uint64_t gaps = 0;
    uint64_t decode_errors = 0;
  };
  struct LmcacheInstruments {
    prometheus::Counter* poll_failures = nullptr;
  };
  enum class TokenizeOutcome { kOk, kTimeout, kError };
  // One histogram per outcome, indexed by TokenizeOutcome.
  using TokenizeInstruments = std::array<ShardedHistogram*, 3>;
  enum class DecisionOutcome { kOk, kTimeout, kError, kStatus, kInvalid };
  struct DecisionInstruments {
    std::array<ShardedCounter*, 5> requests{};  // indexed by DecisionOutcome
    ShardedHistogram* seconds = nullptr;
  };
  // SPEC §18: the path a disaggregated route's request took, and where its uncached count came
  // from (balance/split_decider.h's PromptCount, in its order).
  enum class SplitPath { kDisaggregated, kAggregated, kPrefillFailed };
  using DisaggregationInstruments = std::array<std::array<ShardedCounter*, 3>, 3>;
  enum class SnapshotFetch { kUpdated, kNotModified, kRejected, kError };
  struct SnapshotFollowerInstruments {
    std::array<prometheus::Counter*, 4> fetches{};  // indexed by SnapshotFetch
    prometheus::Gauge* version = nullptr;
    prometheus::Gauge* up = nullptr;
  };

  // `workers`: the worker threads that will update the request path's instruments, each in cells
  // of its own; 0 means one per core, as [server] workers = 0 does.
  explicit Metrics(unsigned workers = 0);
  ~Metrics();

  // The instruments of a route, candidate, endpoint... are leased into `lease`: they stay valid,
  // and in /metrics, at least as long as it holds them.
  RouteInstruments route(std::string_view route, SeriesLease& lease);
  CandidateInstruments candidate(std::string_view route, std::string_view strategy,
                                 std::string_view target, SeriesLease& lease);
  // (route() also leases route_endpoints and route_endpoints_available, which render() sets from
  // the FleetView's routes.)
  // An endpoint some route may use: from now on render() shows its in_flight, breaker_state,
  // endpoint_healthy and endpoint_parked, read from the FleetView.
  EndpointInstruments endpoint(std::string_view endpoint, SeriesLease& lease);
  // The counter of requests handed from `route` to its fallback route `to`.
  prometheus::Counter* fallback(std::string_view route, std::string_view to, SeriesLease& lease);
  // An adaptive route (SPEC §6.10): its decisions, and for each target (its label, as the
  // FleetView's picks name it) its picks; scored (by its name in the telemetry samples) its score.
  void adaptive_route(std::string_view route, SeriesLease& lease);
  void adaptive_target(std::string_view route, std::string_view target, std::string_view scored_as,
                       SeriesLease& lease);
  // An endpoint whose engine is scraped: from now on render() also shows its engine_load and
  // engine_load_fresh, read from the FleetView.
  EngineInstruments engine(std::string_view endpoint, SeriesLease& lease);
  // An endpoint whose KV events are subscribed to.
  KvEventInstruments kv_events(std::string_view endpoint, SeriesLease& lease);
  // An endpoint whose LMCache endpoint is polled: from now on render() also shows its
  // lmcache_occupancy_ratio, read from the FleetView.
  LmcacheInstruments lmcache(std::string_view endpoint, SeriesLease& lease);
  // A provider with tokenize = "engine": the series of its /tokenize calls.
  TokenizeInstruments tokenize(std::string_view provider, SeriesLease& lease);
  // A policy route that asks a decision service: the series of its calls.
  DecisionInstruments decision(std::string_view route, SeriesLease& lease);
  // A disaggregated route: the series of its requests' paths.
  DisaggregationInstruments disaggregation(std::string_view route, SeriesLease& lease);
  // A gateway node that follows the control plane: the series of its polls (up starts at 0).
  SnapshotFollowerInstruments snapshot_follower();

  void auth_failure(std::string_view reason);
  // SPEC §15: a key's request refused (or admitted open) by its limits, by reason.
  void limit_refusal(std::string_view reason);
  void limit_backend_error();
  // [metrics] per_key: one answered request of `key` (in `team`, "" for none) and what it used.
  void key_usage(std::string_view key, std::string_view team, uint64_t input_tokens,
                 uint64_t output_tokens, double usd);
  void accept_error(std::string_view reason);
  // +1 when a client connection opens, -1 when it closes.
  void connections_changed(int delta);
  void config_reload(bool ok, uint64_t version);
  // rolter_build_info{version,commit,build_type} = 1 (SPEC §17). Call once, at start.
  void set_build_info(std::string_view version, std::string_view commit,
                      std::string_view build_type);

  // Request-path helpers; null instruments are ignored.
  static void count_pick(const CandidateInstruments& c);
  // One response: its class, and its exact status when it is one of kCountedCodes.
  static void count_response(const CandidateInstruments& c, unsigned status);
  static void count_retry(const RouteInstruments& r);
  static void count_tokens(const RouteInstruments& r, std::optional<uint64_t> in,
                           std::optional<uint64_t> out);
  static void count_park(const EndpointInstruments& e, ParkReason reason);
  static void count(prometheus::Counter* counter);
  static void count(ShardedCounter* counter);
  static void observe_seconds(ShardedHistogram* h, double seconds);
  // One /tokenize call and how it ended.
  static void observe_tokenize(const TokenizeInstruments& t, TokenizeOutcome outcome,
                               double seconds);
  // One decision-service call and how it ended.
  static void observe_decision(const DecisionInstruments& d, DecisionOutcome outcome,
                               double seconds);
  // One request of a disaggregated route; `count` indexes kv_index, tokens, bytes.
  static void count_split(const DisaggregationInstruments& d, SplitPath path, size_t count);
  // One scrape of an engine's /metrics: a failure, or a success and what it read.
  static void count_engine_scrape(const EngineInstruments& e, const EngineScrape& scrape);
  // Brings an instance's KV-event series up to `counts` (counters only grow). Called by the one
  // thread that owns those instruments (the KV-event service's).
  static void sync_kv_events(const KvEventInstruments& k, const KvEventCounts& counts);
  // One failed poll of an LMCache endpoint.
  static void count_lmcache_failure(const LmcacheInstruments& l);
  // Prefix insertions sent to and received from the shared stream, and whether it is reachable.
  void count_shared_prefixes(uint64_t sent, uint64_t received);
  void set_shared_state_up(bool up);
  // One DNS lookup of a discovered provider (SPEC §17), and how many endpoints it now has (the
  // last good set, after a failure).
  void discovery_lookup(std::string_view provider, bool ok, size_t endpoints);
  // One poll of the control plane and how it ended; sets control_plane_up (0 after kError).
  static void count_snapshot_fetch(const SnapshotFollowerInstruments& s, SnapshotFetch outcome);

  // Sets an adaptive route's blended score of one target (SPEC §6.10), when a lease holds it
  // (adaptive_target()); a route or target no snapshot has any more is not shown again.
  void set_adaptive_score(std::string_view route, std::string_view target, double score);
  // One telemetry post to the control plane, and whether it was accepted.
  void count_adaptive_telemetry_post(bool ok);

  // The Prometheus text exposition of every metric, with endpoint gauges read from `fleet`, and
  // the process_* metrics.
  std::string render(const FleetView& fleet);
  // Folds what the workers counted into its series (as collect() does) and sets the gauges
  // render() reads from `fleet` (in-flight, breaker, health, parking, adaptive counters), for a
  // reader of registry() that does not render (the node stats reporter).
  void refresh(const FleetView& fleet);

  // Every family of registry(), with what the workers counted folded in first. Read the registry
  // through this, render() or after refresh(): a sharded series shows nothing until folded.
  std::vector<prometheus::MetricFamily> collect();

  // The registry behind render(), for modules that keep families of their own (the control
  // plane's, a gateway node's). Families added here are rendered with the rest.
  prometheus::Registry& registry() { return *registry_; }
  // The table that leases registry()'s route- and endpoint-labelled series (observe/series_table.h),
  // for modules whose families follow the reload rule too.
  const std::shared_ptr<SeriesTable>& series_table() { return table_; }

 private:
  struct Families;
  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<SeriesTable> table_;
  std::unique_ptr<Families> families_;
};

}  // namespace rolter
