// Config: rolter.toml as plain values (SPEC §3), after parsing and validation.
//
// Produced by load_config() (config/loader.h); consumed by the snapshot builder. Plain data: no
// behaviour, no references into the TOML document. Every field has the SPEC's default.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "balance/strategy_names.h"
#include "limits/limit_types.h"

namespace rolter {

struct ServerConfig {
  std::string listen = "127.0.0.1:4000";
  uint32_t workers = 0;  // 0 = one per core
  uint64_t max_body_bytes = 33554432;
  uint64_t upstream_timeout_ms = 600000;
  uint64_t connect_timeout_ms = 2000;
  uint64_t first_byte_timeout_ms = 120000;
  uint64_t drain_timeout_ms = 30000;
  // A request head must arrive within this from its first byte (slow clients, slow-loris).
  uint64_t header_timeout_ms = 10000;
  // A keep-alive connection with no request for this long is closed.
  uint64_t idle_timeout_ms = 75000;
  // Open client connections at most; at the cap the listener stops accepting until one closes.
  // 0 = no cap beyond the process's file limit.
  uint64_t max_connections = 0;
  // A separate listener for /metrics (and /healthz, /readyz), e.g. "127.0.0.1:9464". Empty: served
  // on the main listener, behind a key when [[keys]] exist.
  std::string metrics_listen;
  // X-Forwarded-For, X-Forwarded-Proto and Via on forwarded requests (Via on responses too).
  bool forwarded_headers = true;
  // Networks (CIDR) of proxies in front of the gateway whose X-Forwarded-* are believed.
  std::vector<std::string> trusted_proxies;
  // Where the JSON line per request goes: "stderr", "off", or a file (relative: beside the config
  // file) opened for appending and reopened on SIGUSR1. A reload that changes it takes effect.
  std::string access_log = "stderr";
};

// [tls]: the main listener terminates TLS. Both empty = plaintext HTTP. Paths are resolved against
// the config file's directory when relative. Read at start-up only: a reload does not replace the
// certificate (restart to change it).
struct TlsConfig {
  std::string cert;  // PEM certificate chain, leaf first
  std::string key;   // PEM private key of the leaf
};

struct StoreConfig {
  std::string url;  // empty = sqlite beside the config
};

struct CostConfig {
  double input = 0;                    // price per million input tokens
  double output = 0;                   // price per million output tokens
  std::optional<double> cached_input;  // per million cached input tokens; absent = `input`
};

struct KvEventsConfig {
  std::string endpoint;
  std::string replay_endpoint;
  std::string topic;
  uint32_t block_size = 16;
  uint64_t max_blocks = 1000000;
  uint32_t stale_secs = 30;
};

struct LmcacheConfig {
  std::string endpoint;
  uint32_t refresh_secs = 2;
  uint32_t stale_secs = 10;
};

struct InstanceConfig {
  std::string base_url;
  std::optional<KvEventsConfig> kv_events;
  std::optional<LmcacheConfig> lmcache;
};

// A provider whose instances are found by DNS (SPEC §17; config/discover.h). Its kv_events and
// lmcache tables are templates: "{host}" in an endpoint becomes each instance's address.
struct DiscoverConfig {
  std::string url;              // dns://NAME:PORT[/path] or dns+srv://NAME[/path]
  uint64_t interval_ms = 5000;  // between lookups; at least 500
  std::string resolver;         // "IP[:PORT]"; "" = the system's (/etc/resolv.conf)
  std::optional<KvEventsConfig> kv_events;
  std::optional<LmcacheConfig> lmcache;
};

struct ProviderConfig {
  std::string name;
  std::string kind = "openai";  // openai | anthropic | gemini | decision_service
  // The provider's key comes from one of these, or neither (no key sent). The file is read at
  // start and at every reload, its trailing newline trimmed, so a mounted secret rotates without
  // a restart (SPEC §16).
  std::string api_key_env;
  std::string api_key_file;  // relative to the config file's folder
  // [providers.headers]: fixed headers sent with every request (Azure's api-key, api-version).
  std::vector<std::pair<std::string, std::string>> headers;
  uint32_t max_loras = 8;
  std::string health_path;  // empty = no active health check
  // Where balancers read an instance's load (SPEC §6.15): "local" = this gateway's in-flight
  // count; "engine_metrics" = the engine's running + waiting, scraped from {base_url}/metrics
  // every metrics_interval_ms, plus what this gateway sent since.
  std::string load_source = "local";
  uint64_t metrics_interval_ms = 250;
  // Where a request's token ids come from when it brings none and its route's strategy reads
  // them (SPEC §6.15): "none" = nowhere (the strategy stays neutral); "engine" = the reply of
  // POST {base_url}/tokenize on one healthy instance, given tokenize_timeout_ms for all of it.
  std::string tokenize = "none";
  uint64_t tokenize_timeout_ms = 50;
  // Flow control (SPEC §19): an instance is saturated at this many requests (its load: local or
  // engine-reported), or when the engine reports more than max_waiting_per_instance waiting
  // (load_source = "engine_metrics"). Unset = never saturated.
  std::optional<uint32_t> max_in_flight_per_instance;
  std::optional<uint32_t> max_waiting_per_instance;
  // Prefill/decode disaggregation (SPEC §18): which step of a disaggregated route its instances
  // serve, "prefill", "decode" or "both" (they take whole requests too).
  std::string role = "both";
  std::optional<CostConfig> cost;
  // From the file, at least one: `base_url` becomes a single instance, with the provider-level
  // kv_events / lmcache tables attached to it. With `discover`, none in the file: what the last
  // good lookup found is filled in before each snapshot is built (fleet/discovered_instances.h).
  std::vector<InstanceConfig> instances;
  std::optional<DiscoverConfig> discover;
};

struct TargetConfig {
  std::string provider;
  std::string model;               // upstream model name written into the forwarded body
  std::optional<double> weight;    // absent = 1 (policy mode distinguishes absent from set)
  std::optional<CostConfig> cost;  // catalog price of this target; absent = the provider's
};

// One scorer of a pipeline route and its weight (SPEC §6.7).
struct PipelineScorerConfig {
  std::string name;
  double weight = 1;
};

struct SessionKeySource {
  std::string header;  // exactly one of header / body is set
  std::string body;
};

struct PolicyConfig {
  std::optional<double> session_affinity_weight;
  std::vector<SessionKeySource> session_keys;
  std::vector<std::string> body_path_suffixes;
  std::optional<double> least_inflight_weight;
  struct DecisionService {
    double weight = 10;
    std::string provider;
    std::string model;
    std::string instructions;
    std::map<std::string, std::optional<std::string>> criteria;
  };
  std::optional<DecisionService> decision_service;
};

// One step of a disaggregated route (SPEC §18): [routes.prefill] or [routes.decode].
struct RouteStageConfig {
  std::string strategy;  // empty = the step's default
  std::vector<TargetConfig> targets;
};

struct RouteConfig {
  std::string name;
  std::string strategy{strategy::kDefault};
  std::vector<TargetConfig> targets;
  // SPEC §18: "aggregated" (the default) or "disaggregated". A disaggregated route's own strategy
  // and targets are its decode step's ([routes.decode], the candidates its answers come from);
  // `prefill` holds [routes.prefill], and `min_uncached_tokens` decides which requests use it.
  std::string mode = "aggregated";
  std::optional<RouteStageConfig> prefill;
  bool decode_table = false;  // [routes.decode] was given
  uint64_t min_uncached_tokens = 512;
  std::optional<PolicyConfig> policy;
  // [routes.pipeline]: scorer name = weight. Empty = the default stack.
  std::vector<PipelineScorerConfig> pipeline;
  // Routes tried in order when this one cannot answer (SPEC §16, "Fallbacks"), and on which
  // failures: unavailable (the default), rate_limited, context_length, content_filter.
  std::vector<std::string> fallbacks;
  std::vector<std::string> fallback_on;
  std::optional<uint32_t> priority;  // the band (0..7) of its requests by default (SPEC §19)
};

struct GroupMemberConfig {
  std::string provider;
  double weight = 1;
  std::string upstream_model;  // empty = passthrough of the requested model
};

struct ProviderGroupConfig {
  std::string slug;
  std::string strategy{strategy::kDefault};
  std::vector<GroupMemberConfig> members;
};

// SPEC §15: limits that apply only where the request's route address matches `route` (a glob on
// route names and group addresses, as in a key's `routes`).
struct RouteLimitConfig {
  std::string route;
  LimitSpec limits;
};

// [[teams]]: keys that name a team share its limits and budget, on top of their own.
struct TeamConfig {
  std::string name;
  LimitSpec limits;
  std::vector<RouteLimitConfig> route_limits;
  std::optional<uint32_t> priority;  // its keys' band (0..7) when the key sets none
};

struct KeyConfig {
  std::string name;
  std::string key_env;     // the key's value is read from this environment variable, or
  std::string key_sha256;  // its SHA-256, lowercase hex
  // With key_sha256: the digest is SHA-256(salt bytes || key), and the key reads
  // "rk-<key_salt>-<secret>" (the control plane's keys). 16 lowercase hex characters.
  std::string key_salt;
  std::vector<std::string> routes;     // allowed addresses (globs on group addresses); empty = all
  std::vector<std::string> providers;  // allowed providers; empty = all
  std::string team;                    // a [[teams]] name, or "" for none
  LimitSpec limits;                    // rpm, burst, tpm, max_in_flight, budget
  std::vector<RouteLimitConfig> route_limits;
  // SPEC §19: the band (0..7) of its requests, and the highest x-rolter-priority it may ask.
  std::optional<uint32_t> priority;
  std::optional<uint32_t> max_priority;
};

// [limits] (SPEC §15): where the limits of keys and teams are counted.
struct LimitsConfig {
  std::string backend = "local";  // "local": exact within this node; "redis": across every node
  std::string redis_url;  // redis://host[:port][/db], rediss:// (TLS) or unix:///path[?db=N]
  std::string redis_password_env;   // AUTH with this variable's value, or
  std::string redis_password_file;  // with this file's content; neither = no AUTH
  // rediss://: a PEM CA bundle trusted besides the system store (a private CA); "" = system only.
  std::string redis_ca_file;
  uint64_t timeout_ms = 20;  // each Redis round trip; past it the backend counts as away
  std::string on_backend_error = "open";  // "open": admit and count; "closed": answer 503
  // The output a request reserves when it names no max_tokens (SPEC §15's estimate).
  uint64_t default_output_tokens = 1024;
};

// [usage]: each node's usage records, flushed to the store in one transaction at this period.
struct UsageConfig {
  uint64_t flush_secs = 10;
};

// [metrics]: series whose cardinality the operator chooses.
struct MetricsConfig {
  bool per_key = false;  // rolter_key_* series labelled by key name
};

// [[queue.bands]] (SPEC §19): what one priority band may do beyond its place in the order.
struct QueueBandConfig {
  uint32_t band = 0;  // 0 (lowest) … 7
  // A request of this band that must wait displaces a lower band's dispatched request whose
  // answer has not begun; that one waits again.
  bool preempt = false;
  // When its route is saturated, a request whose estimated prefill alone (the fastest candidate's
  // learned time to first token for its uncached prompt, unqueued) exceeds this is refused at once
  // instead of queued. Unset: no such refusal.
  std::optional<uint64_t> max_ttft_ms;
};

// [queue] (SPEC §19): where requests to a saturated route wait, per route.
struct QueueConfig {
  uint64_t max_requests = 1024;  // waiting at most; 0 = shed at once when saturated
  uint64_t max_wait_ms = 30000;  // a request not dispatched by then is refused (429)
  // Within a band, a request that must wait displaces a not-yet-answering request of the tenant
  // holding the most of the band's running requests (two or more above its own tenant's).
  bool fair_preempt = false;
  // Within a band, the route's last `fair_reserve` free slots go only to a tenant holding two or
  // more fewer running requests than the band's heaviest, for a second after such a tenant last
  // arrived; 0 = no reserve.
  uint32_t fair_reserve = 0;
  std::vector<QueueBandConfig> bands;
};

struct AdaptiveRoutingConfig {
  bool enabled = false;
  double latency_weight = 1.0;
  double cost_weight = 0.5;
  double load_weight = 0.25;
  double exploration_ratio = 0.05;
  uint32_t min_samples = 50;
};

// [shared_state] (SPEC §6.17): what the prefix trees of several gateway nodes learn, shared through
// a Redis stream. An empty redis_url shares nothing.
struct SharedStateConfig {
  std::string redis_url;                // redis://host[:port][/db] or unix:///path
  std::string redis_password_env;       // AUTH with the value of this variable; empty = no AUTH
  std::string key = "rolter:prefixes";  // the stream; nodes sharing one fleet use the same key
  // Entries the stream keeps (XADD MAXLEN ~): each is a prompt of at most 32 KiB, so 10,000 is at
  // most about 320 MB in Redis, and some minutes of a busy fleet's conversations.
  uint64_t max_entries = 10000;
  // Entries a node reads back when it starts or reloads, so its new trees know what the fleet
  // served lately.
  uint64_t replay_entries = 2000;
};

struct HealthConfig {
  uint64_t interval_ms = 5000;
  uint64_t timeout_ms = 1000;
  uint32_t unhealthy_threshold = 3;
  uint32_t healthy_threshold = 2;
};

struct BreakerConfig {
  uint32_t failure_threshold = 5;
  uint64_t open_ms = 30000;
  uint32_t half_open_probes = 1;
};

struct RetryConfig {
  uint32_t max_attempts = 3;
  std::vector<uint32_t> on_status = {429, 500, 502, 503, 504};
  uint64_t park_on_429_max_ms = 60000;
  uint32_t max_fallbacks = 2;  // route hops a request may make (RouteConfig::fallbacks)
};

// [anthropic]: what translating to Anthropic's Messages API needs (SPEC §16).
struct AnthropicConfig {
  uint32_t default_max_tokens = 4096;  // Messages requires max_tokens; used when a client sets none
};

// [tracing] (SPEC §17): W3C Trace Context is read and passed upstream whatever this says; spans
// are made and exported only with an otlp_endpoint.
struct TracingConfig {
  // Where spans are posted (OTLP/HTTP, protobuf): "http://host:4318/v1/traces". Without a path,
  // /v1/traces. Empty: no spans.
  std::string otlp_endpoint;
  // Requests that start a trace are sampled at this ratio (by trace id); a caller's sampled flag
  // decides for the requests it traces (parent-based).
  double sample_ratio = 0.01;
  // Spans waiting for export; beyond this, new spans are dropped and counted. Read at start-up.
  uint64_t max_queue = 2048;
};

struct Config {
  std::string path;  // the file it was read from
  ServerConfig server;
  TlsConfig tls;
  StoreConfig store;
  std::vector<ProviderConfig> providers;
  std::vector<RouteConfig> routes;
  std::vector<ProviderGroupConfig> provider_groups;
  std::vector<KeyConfig> keys;
  std::vector<TeamConfig> teams;
  LimitsConfig limits;
  UsageConfig usage;
  MetricsConfig metrics;
  QueueConfig queue;
  AdaptiveRoutingConfig adaptive_routing;
  AnthropicConfig anthropic;
  SharedStateConfig shared_state;
  HealthConfig health;
  BreakerConfig breaker;
  RetryConfig retry;
  TracingConfig tracing;
};

}  // namespace rolter
