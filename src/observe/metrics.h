// Metrics: the gateway's Prometheus metrics (SPEC §9), rendered at GET /metrics.
//
// One Metrics object lives for the whole process, like the LoadTracker, so counters survive
// reloads. A snapshot asks it once per route and per candidate for the instruments it will
// touch, and keeps the raw pointers: on the request path an update is an atomic add on a
// pre-built series, never a label lookup. Per-instance state (in flight, breaker, health,
// parking) is read at scrape time from a FleetView (observe/fleet_view.h), which the LoadTracker
// implements: observe/ includes nothing of the fleet's.
//
// Metric names (all prefixed rolter_):
//   requests_total{route,target,code}      responses sent, by status class (2xx, 4xx, ...)
//   request_duration_seconds{route}         whole request, histogram
//   ttft_seconds{route}                     first content event of a stream (the response
//                                           head when not streamed), histogram
//   picks_total{route,strategy,target}      balancer picks that were tried
//   retries_total{route}                    attempts after the first
//   tokens_total{route,direction}           prompt (in) and generated (out) tokens, as the
//                                           upstream reported them in its usage (streams too)
//   parks_total{instance,reason}            instances parked (429, refused)
//   fallbacks_total{route,to}               requests handed from a route that could not answer
//                                           to its next fallback route (SPEC §16)
//   in_flight{instance}, breaker_state{instance} (0 closed, 1 open, 2 half-open),
//   instance_healthy{instance}, instance_parked{instance}
//   config_reloads_total{result}, config_version
//   auth_failures_total{reason}             requests refused for a missing or invalid key
//   limit_refusals_total{reason}            requests a key's limits refused (rate_limit,
//                                           budget, unavailable), and those admitted while the
//                                           limits backend was away (backend_open)
//   limit_backend_errors_total              admissions and settlements the backend failed
//   key_requests_total{key,team}            with [metrics] per_key = true: requests per key,
//   key_tokens_total{key,team,direction}    tokens per key (input, output), spend per key
//   key_spend_usd_total{key,team}
//   accept_errors_total{reason}             failed accepts (emfile, enfile, other): the listener
//                                           backs off instead of spinning
//   connections                             open client connections
//   engine_load{instance}                   running + waiting at the last good scrape of the
//                                           engine's /metrics (load_source = "engine_metrics")
//   engine_load_fresh{instance}             1 while that scrape is fresh and the balancers use
//                                           it; 0 when failed or stale (local in-flight is used)
//   engine_gpu_cache_usage{instance}        the engine's KV-cache usage (0..1) at that scrape
//   engine_scrape_failures_total{instance}  scrapes that failed (connect, timeout, status, body)
//   kv_events_state{instance}               the instance's KV-event stream (SPEC §6.8):
//                                           0 disconnected, 1 live, 2 stale, 3 gap
//   kv_events_total{instance}               KV events decoded and applied to its index
//   kv_event_gaps_total{instance}           sequence gaps seen in its stream
//   kv_event_decode_errors_total{instance}  messages that could not be read, and skipped
//   lmcache_occupancy{instance}             the instance's LMCache occupancy (0..1) at its last
//                                           good poll of lmcache.endpoint, while lmcache_aware
//                                           may use it; NaN when it may not (failed, stale,
//                                           cache_available false; prometheus-cpp
//                                           writes it "Nan")
//   lmcache_poll_failures_total{instance}   polls that failed (connect, timeout, status, body)
//   tokenize_seconds{provider,outcome}      POST /tokenize calls to the engines (tokenize =
//                                           "engine"), histogram; outcome = ok, timeout, error
//   decision_service_requests_total{route,outcome}
//                                           calls to a policy route's decision service (SPEC
//                                           §7); outcome = ok, timeout, error (connect, I/O),
//                                           status (non-2xx), invalid (a reply that may not vote)
//   decision_service_seconds{route}         those calls' duration, whatever their outcome
//   adaptive_routing_target_score{model,target}
//                                           an adaptive route's blended score of each target,
//                                           set by the telemetry sampler every period
//   adaptive_routing_decisions_total{model,decision}
//                                           an adaptive route's picks by decision (blend,
//                                           exploration, probe, fallback), read from the
//                                           LoadTracker at scrape time
//   adaptive_routing_target_picks_total{model,target,decision}
//                                           the same per target
//   adaptive_telemetry_posts_total{result}  telemetry posts to the control plane (ok, error)
//   snapshot_fetches_total{result}          a gateway node's polls of the control plane for its
//                                           configuration (updated, not_modified, rejected, error)
//   snapshot_version                        the control plane's snapshot version the node serves
//                                           (0 = none yet)
//   control_plane_up                        1 after an answered poll, 0 after a failed one
//   shared_prefix_entries_total{direction}  prefix insertions shared through [shared_state]'s
//                                           Redis stream: sent, received (from other nodes, or
//                                           replayed)
//   shared_state_up                         1 while that stream is reachable, 0 when it is not
//   discovery_lookups_total{provider,outcome}
//                                           DNS lookups of a discovered provider's instances
//                                           (SPEC §17): ok, failed (the last good set is kept)
//   discovery_instances{provider}           the instances its last good lookup found
//   build_info{version,commit,build_type}   1; the binary's version, commit and build type
//
// Thread-safety: all methods may be called from any thread. Histogram observations take the
// histogram's own short lock (prometheus-cpp); counters are atomic.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "observe/fleet_view.h"

namespace prometheus {
class Counter;
class Gauge;
class Histogram;
class Registry;
}  // namespace prometheus

namespace rolter {

class Metrics {
 public:
  // Status classes 1xx..5xx; index 0 counts anything else (e.g. a response never sent).
  using StatusCounters = std::array<prometheus::Counter*, 6>;

  struct RouteInstruments {
    prometheus::Histogram* duration = nullptr;
    prometheus::Histogram* ttft = nullptr;
    prometheus::Counter* retries = nullptr;
    prometheus::Counter* tokens_in = nullptr;
    prometheus::Counter* tokens_out = nullptr;
  };
  struct CandidateInstruments {
    prometheus::Counter* picks = nullptr;
    StatusCounters responses{};
    // Per target, for the dashboard's per-target percentiles; a target's instances share them.
    prometheus::Histogram* duration = nullptr;
    prometheus::Histogram* ttft = nullptr;
  };
  struct EngineInstruments {
    prometheus::Gauge* gpu_cache_usage = nullptr;
    prometheus::Counter* scrape_failures = nullptr;
  };
  struct KvEventInstruments {
    prometheus::Gauge* state = nullptr;
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
  using TokenizeInstruments = std::array<prometheus::Histogram*, 3>;
  enum class DecisionOutcome { kOk, kTimeout, kError, kStatus, kInvalid };
  struct DecisionInstruments {
    std::array<prometheus::Counter*, 5> requests{};  // indexed by DecisionOutcome
    prometheus::Histogram* seconds = nullptr;
  };
  enum class SnapshotFetch { kUpdated, kNotModified, kRejected, kError };
  struct SnapshotFollowerInstruments {
    std::array<prometheus::Counter*, 4> fetches{};  // indexed by SnapshotFetch
    prometheus::Gauge* version = nullptr;
    prometheus::Gauge* up = nullptr;
  };

  Metrics();
  ~Metrics();

  RouteInstruments route(std::string_view route);
  CandidateInstruments candidate(std::string_view route, std::string_view strategy,
                                 std::string_view target);
  // An instance whose engine is scraped: from now on render() also shows its engine_load and
  // engine_load_fresh, read from the FleetView.
  EngineInstruments engine(std::string_view instance);
  // An instance whose KV events are subscribed to.
  KvEventInstruments kv_events(std::string_view instance);
  // An instance whose LMCache endpoint is polled: from now on render() also shows its
  // lmcache_occupancy, read from the FleetView.
  LmcacheInstruments lmcache(std::string_view instance);
  // A provider with tokenize = "engine": the series of its /tokenize calls.
  TokenizeInstruments tokenize(std::string_view provider);
  // A policy route that asks a decision service: the series of its calls.
  DecisionInstruments decision(std::string_view route);
  // A gateway node that follows the control plane: the series of its polls (up starts at 0).
  SnapshotFollowerInstruments snapshot_follower();

  void park(std::string_view instance, std::string_view reason);
  // A request handed from `route` to the fallback route `to` (a label lookup: fallbacks are rare).
  void fallback(std::string_view route, std::string_view to);
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
  static void count_response(const CandidateInstruments& c, unsigned status);
  static void count_retry(const RouteInstruments& r);
  static void count_tokens(const RouteInstruments& r, std::optional<uint64_t> in,
                           std::optional<uint64_t> out);
  static void observe_seconds(prometheus::Histogram* h, double seconds);
  // One /tokenize call and how it ended.
  static void observe_tokenize(const TokenizeInstruments& t, TokenizeOutcome outcome,
                               double seconds);
  // One decision-service call and how it ended.
  static void observe_decision(const DecisionInstruments& d, DecisionOutcome outcome,
                               double seconds);
  // One scrape of an engine's /metrics: a failure, or a success with the cache usage it read.
  static void count_engine_scrape(const EngineInstruments& e, bool ok,
                                  std::optional<double> gpu_cache_usage);
  // Brings an instance's KV-event series up to `counts` (counters only grow). Called by the one
  // thread that owns those instruments (the KV-event service's).
  static void sync_kv_events(const KvEventInstruments& k, const KvEventCounts& counts);
  // One failed poll of an LMCache endpoint.
  static void count_lmcache_failure(const LmcacheInstruments& l);
  // Prefix insertions sent to and received from the shared stream, and whether it is reachable.
  void count_shared_prefixes(uint64_t sent, uint64_t received);
  void set_shared_state_up(bool up);
  // One DNS lookup of a discovered provider (SPEC §17), and how many instances it now has (the
  // last good set, after a failure).
  void discovery_lookup(std::string_view provider, bool ok, size_t instances);
  // One poll of the control plane and how it ended; sets control_plane_up (0 after kError).
  static void count_snapshot_fetch(const SnapshotFollowerInstruments& s, SnapshotFetch outcome);

  // Sets an adaptive route's blended score of one target (SPEC §6.10).
  void set_adaptive_score(std::string_view model, std::string_view target, double score);
  // One telemetry post to the control plane, and whether it was accepted.
  void count_adaptive_telemetry_post(bool ok);

  // The Prometheus text exposition of every metric, with instance gauges read from `fleet`.
  std::string render(const FleetView& fleet);
  // Sets the gauges render() reads from `fleet` (in-flight, breaker, health, parking, adaptive
  // counters), for a reader of registry() that does not render (the node stats reporter).
  void refresh(const FleetView& fleet);

  // The registry behind render(), for modules that keep families of their own (the control
  // plane's, a gateway node's). Families added here are rendered with the rest.
  prometheus::Registry& registry() { return *registry_; }

 private:
  struct Families;
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<Families> families_;
};

}  // namespace rolter
