#include "config/schema.h"

#include <filesystem>

#include "config/flow_fields.h"
#include "config/toml_reader.h"
#include "config/url.h"

namespace rolter::config_internal {
namespace {

// Timeouts and thresholds of 0 would fail every request or never trip; durations that may be 0
// (drain, 429 parking) say so where they are read.
constexpr int64_t kAtLeastOne = 1;
constexpr int64_t kMinHttpStatus = 100;
constexpr int64_t kMaxHttpStatus = 599;

// A relative path in the config names a file beside the config, wherever rolter was started.
std::string beside_config(const std::string& path, const std::string& config_file) {
  if (path.empty() || path.front() == '/') return path;
  const std::filesystem::path dir = std::filesystem::path(config_file).parent_path();
  return dir.empty() ? path : (dir / path).string();
}

void read_server(TableReader& in, ServerConfig& out, const std::string& config_file) {
  in.read("listen", out.listen);
  in.read("workers", out.workers);
  in.read("max_body_bytes", out.max_body_bytes, kAtLeastOne);
  in.read("upstream_timeout_ms", out.upstream_timeout_ms, kAtLeastOne);
  in.read("connect_timeout_ms", out.connect_timeout_ms, kAtLeastOne);
  in.read("first_byte_timeout_ms", out.first_byte_timeout_ms, kAtLeastOne);
  in.read("drain_timeout_ms", out.drain_timeout_ms);  // 0 = exit without waiting
  in.read("header_timeout_ms", out.header_timeout_ms, kAtLeastOne);
  in.read("idle_timeout_ms", out.idle_timeout_ms, kAtLeastOne);
  in.read("max_connections", out.max_connections);  // 0 = no cap
  in.read("metrics_listen", out.metrics_listen);
  in.read("forwarded_headers", out.forwarded_headers);
  in.read("trusted_proxies", out.trusted_proxies);
  in.read("access_log", out.access_log);
  in.finish();
  if (out.access_log != "stderr" && out.access_log != "off") {
    out.access_log = beside_config(out.access_log, config_file);
  }
}

void read_tls(TableReader& in, TlsConfig& out, const std::string& config_file) {
  in.read("cert", out.cert);
  in.read("key", out.key);
  in.finish();
  out.cert = beside_config(out.cert, config_file);
  out.key = beside_config(out.key, config_file);
}

void read_store(TableReader& in, StoreConfig& out) {
  in.read("url", out.url);
  in.finish();
}

KvEventsConfig read_kv_events(TableReader& in) {
  KvEventsConfig out;
  in.read("endpoint", out.endpoint, /*required=*/true);
  in.read("replay_endpoint", out.replay_endpoint);
  in.read("topic", out.topic);
  in.read("block_size", out.block_size, kAtLeastOne);
  in.read("max_blocks", out.max_blocks, kAtLeastOne);
  in.read("stale_secs", out.stale_secs, kAtLeastOne);
  in.finish();
  return out;
}

LmcacheConfig read_lmcache(TableReader& in) {
  LmcacheConfig out;
  in.read("endpoint", out.endpoint, /*required=*/true);
  in.read("refresh_secs", out.refresh_secs, kAtLeastOne);
  in.read("stale_secs", out.stale_secs, kAtLeastOne);
  in.finish();
  return out;
}

// Reads the optional kv_events / lmcache tables of `in` (a provider or an instance) into `out`.
void read_instance_extras(TableReader& in, InstanceConfig& out, Diagnostics& diag) {
  if (const toml::table* t = in.table("kv_events")) {
    TableReader sub(*t, in.key_path("kv_events"), diag);
    out.kv_events = read_kv_events(sub);
  }
  if (const toml::table* t = in.table("lmcache")) {
    TableReader sub(*t, in.key_path("lmcache"), diag);
    out.lmcache = read_lmcache(sub);
  }
}

// The optional [cost] table of a provider or a target: catalog price per million tokens.
std::optional<CostConfig> read_cost(TableReader& in, Diagnostics& diag) {
  const toml::table* t = in.table("cost");
  if (t == nullptr) return std::nullopt;
  TableReader cost_in(*t, in.key_path("cost"), diag);
  CostConfig cost;
  cost_in.read("input", cost.input, NumberRule::kNonNegative);
  cost_in.read("output", cost.output, NumberRule::kNonNegative);
  cost_in.read("cached_input", cost.cached_input, NumberRule::kNonNegative);
  cost_in.finish();
  return cost;
}

ProviderConfig read_provider(TableReader& in, Diagnostics& diag) {
  ProviderConfig out;
  if (!in.alive()) return out;
  in.read("name", out.name, /*required=*/true);
  in.read("kind", out.kind);
  in.read("api_key_env", out.api_key_env);
  in.read("api_key_file", out.api_key_file);
  out.api_key_file = beside_config(out.api_key_file, diag.file());
  if (const toml::table* t = in.table("headers")) {
    TableReader headers_in(*t, in.key_path("headers"), diag);
    headers_in.for_each_name([&](std::string_view name) {
      std::string value;
      headers_in.read(name, value);
      out.headers.emplace_back(std::string(name), std::move(value));
    });
    headers_in.finish();
  }
  in.read("max_loras", out.max_loras);  // 0 = an engine without LoRA adapters
  in.read("health_path", out.health_path);
  in.read("load_source", out.load_source);
  in.read("metrics_interval_ms", out.metrics_interval_ms, kAtLeastOne);
  in.read("tokenize", out.tokenize);
  in.read("tokenize_timeout_ms", out.tokenize_timeout_ms, kAtLeastOne);
  in.read("role", out.role);
  read_provider_flow(in, out);
  out.cost = read_cost(in, diag);

  // One deployment is either a single base_url (with the provider-level kv_events / lmcache
  // tables describing it), a list of instances, each carrying its own, or instances found by DNS.
  // Every key is read whichever is set, so that each is checked (and known) in any case.
  const bool has_base_url = in.has("base_url");
  const bool has_instances = in.has("instances");
  InstanceConfig single;
  in.read("base_url", single.base_url);
  read_instance_extras(in, single, diag);
  DiscoverConfig discover;
  in.read("discover", discover.url);
  in.read("discover_interval_ms", discover.interval_ms, kAtLeastOne);
  in.read("discover_resolver", discover.resolver);
  std::vector<InstanceConfig> listed;
  const toml::array* instances = in.for_each_table("instances", [&](TableReader& inst_in) {
    InstanceConfig inst;
    inst_in.read("base_url", inst.base_url, /*required=*/true);
    read_instance_extras(inst_in, inst, diag);
    inst_in.finish();
    listed.push_back(std::move(inst));
  });
  if (in.has("discover")) {
    // Found at each lookup (fleet/discovered_instances.h), none here; the provider's kv_events /
    // lmcache are templates.
    discover.kv_events = std::move(single.kv_events);
    discover.lmcache = std::move(single.lmcache);
    if (has_base_url || has_instances) {
      diag.error(in.key_path("discover"),
                 "set one of base_url, [[providers.instances]] or discover, not several");
    }
    out.discover = std::move(discover);
  } else {
    for (const char* key : {"discover_interval_ms", "discover_resolver"}) {
      if (in.has(key)) diag.error(in.key_path(key), "only with discover");
    }
  }
  if (out.discover) {
    // No instances from the file.
  } else if (has_instances) {
    out.instances = std::move(listed);
    std::string instances_path = in.key_path("instances");
    if (has_base_url) {
      diag.error(instances_path, "set either base_url or [[providers.instances]], not both");
    } else if (instances != nullptr && instances->empty()) {
      diag.error(instances_path, "needs at least one instance");
    }
    for (const char* extra : {"kv_events", "lmcache"}) {
      if (in.has(extra) && !has_base_url) {
        diag.error(in.key_path(extra), std::string("a provider-level ") + extra +
                                           " table describes base_url; with "
                                           "[[providers.instances]] set it on each instance");
      }
    }
  } else if (has_base_url) {
    out.instances.push_back(std::move(single));
  } else {
    diag.error_at(in.key_path("base_url"), in.pos(),
                  "missing required key (or [[providers.instances]])");
  }
  in.finish();
  return out;
}

TargetConfig read_target(TableReader& in, Diagnostics& diag) {
  TargetConfig out;
  in.read("provider", out.provider, /*required=*/true);
  in.read("model", out.model, /*required=*/true);
  in.read("weight", out.weight, NumberRule::kNonNegative);
  out.cost = read_cost(in, diag);
  in.finish();
  return out;
}

// The SPEC §7 default chain, used when session_affinity is enabled without `keys`.
std::vector<SessionKeySource> default_session_keys() {
  return {SessionKeySource{"session-id", ""}, SessionKeySource{"x-client-request-id", ""},
          SessionKeySource{"", "prompt_cache_key"}};
}

void read_session_affinity(TableReader& in, PolicyConfig& out, Diagnostics& diag) {
  double weight = 1;
  in.read("weight", weight, NumberRule::kPositive);
  out.session_affinity_weight = weight;
  out.session_keys = default_session_keys();
  out.body_path_suffixes = {"/responses", "/messages"};
  std::vector<SessionKeySource> keys;
  bool ok = true;
  const toml::array* key_list = in.for_each_table("keys", [&](TableReader& key_in) {
    SessionKeySource source;
    key_in.read("header", source.header);
    key_in.read("body", source.body);
    key_in.finish();
    if (key_in.has("header") == key_in.has("body")) {
      diag.error(key_in.path(), "set exactly one of header or body");
      ok = false;
    } else if (source.header.empty() && source.body.empty()) {
      diag.error(key_in.path(), "must not be empty");
      ok = false;
    }
    keys.push_back(std::move(source));
  });
  if (key_list != nullptr) {
    if (keys.empty()) {
      diag.error(in.key_path("keys"),
                 "must not be empty: without a key source the plugin never votes");
    } else if (ok) {
      out.session_keys = std::move(keys);
    }
  }
  in.read("body_path_suffixes", out.body_path_suffixes);
  in.finish();
}

PolicyConfig::DecisionService read_decision_service(TableReader& in, Diagnostics& diag) {
  PolicyConfig::DecisionService out;
  in.read("weight", out.weight, NumberRule::kPositive);
  in.read("provider", out.provider, /*required=*/true);
  in.read("model", out.model, /*required=*/true);
  in.read("instructions", out.instructions);
  if (const toml::table* t = in.table("criteria")) {
    // TOML has no null: an empty description stands for "no description".
    TableReader criteria_in(*t, in.key_path("criteria"), diag);
    criteria_in.for_each_name([&](std::string_view model) {
      std::string description;
      criteria_in.read(model, description);
      out.criteria[std::string(model)] =
          description.empty() ? std::nullopt : std::optional<std::string>(description);
    });
    criteria_in.finish();
  }
  in.finish();
  return out;
}

PolicyConfig read_policy(TableReader& in, Diagnostics& diag) {
  PolicyConfig out;
  if (const toml::table* t = in.table("session_affinity")) {
    TableReader sub(*t, in.key_path("session_affinity"), diag);
    read_session_affinity(sub, out, diag);
  }
  if (const toml::table* t = in.table("least_inflight")) {
    TableReader sub(*t, in.key_path("least_inflight"), diag);
    double weight = 1;
    sub.read("weight", weight, NumberRule::kPositive);
    sub.finish();
    out.least_inflight_weight = weight;
  }
  if (const toml::table* t = in.table("decision_service")) {
    TableReader sub(*t, in.key_path("decision_service"), diag);
    out.decision_service = read_decision_service(sub, diag);
  }
  in.finish();
  return out;
}

// [routes.prefill] or [routes.decode] of a disaggregated route (SPEC §18).
RouteStageConfig read_stage(TableReader& in, Diagnostics& diag) {
  RouteStageConfig out;
  in.read("strategy", out.strategy);
  in.require("targets");
  in.for_each_table("targets", [&](TableReader& target_in) {
    out.targets.push_back(read_target(target_in, diag));
  });
  in.finish();
  return out;
}

RouteConfig read_route(TableReader& in, Diagnostics& diag) {
  RouteConfig out;
  in.read("name", out.name, /*required=*/true);
  in.read("strategy", out.strategy);
  in.for_each_table("targets", [&](TableReader& target_in) {
    out.targets.push_back(read_target(target_in, diag));
  });
  in.read("mode", out.mode);
  in.read("min_uncached_tokens", out.min_uncached_tokens, 1);
  if (const toml::table* t = in.table("prefill")) {
    TableReader sub(*t, in.key_path("prefill"), diag);
    out.prefill = read_stage(sub, diag);
  }
  if (const toml::table* t = in.table("decode")) {
    // The decode step's candidates are the route's own: its answers come from them.
    TableReader sub(*t, in.key_path("decode"), diag);
    if (in.has("targets") || in.has("strategy")) {
      diag.error(in.key_path(in.has("targets") ? "targets" : "strategy"),
                 "a route with [routes.decode] names its decode targets and strategy there");
    }
    RouteStageConfig decode = read_stage(sub, diag);
    out.decode_table = true;
    out.strategy = decode.strategy.empty() ? std::string(strategy::kLeastKvUsage)
                                           : std::move(decode.strategy);
    out.targets.insert(out.targets.end(), std::make_move_iterator(decode.targets.begin()),
                       std::make_move_iterator(decode.targets.end()));
  }
  if (const toml::table* t = in.table("policy")) {
    TableReader sub(*t, in.key_path("policy"), diag);
    out.policy = read_policy(sub, diag);
  }
  if (const toml::table* t = in.table("pipeline")) {
    // Keys are scorer names; the validator checks them against the registry.
    TableReader sub(*t, in.key_path("pipeline"), diag);
    sub.for_each_name([&](std::string_view name) {
      PipelineScorerConfig scorer{.name = std::string(name)};
      sub.read(name, scorer.weight, NumberRule::kNonNegative);
      out.pipeline.push_back(std::move(scorer));
    });
    sub.finish();
  }
  in.read("fallbacks", out.fallbacks);
  in.read("fallback_on", out.fallback_on);
  read_priority(in, "priority", out.priority);
  in.finish();
  return out;
}

ProviderGroupConfig read_group(TableReader& in, Diagnostics& diag) {
  ProviderGroupConfig out;
  in.read("slug", out.slug, /*required=*/true);
  in.read("strategy", out.strategy);
  in.for_each_table("members", [&](TableReader& member_in) {
    GroupMemberConfig member;
    member_in.read("provider", member.provider, /*required=*/true);
    member_in.read("weight", member.weight, NumberRule::kNonNegative);
    member_in.read("upstream_model", member.upstream_model);
    member_in.finish();
    out.members.push_back(std::move(member));
  });
  in.finish();
  return out;
}

// rpm, burst, tpm, max_in_flight and budget = { usd, period }, where a key, a team or one of their
// route_limits sets them.
void read_limit_fields(TableReader& in, LimitSpec& out, Diagnostics& diag) {
  in.read("rpm", out.rpm);
  in.read("burst", out.burst);
  in.read("tpm", out.tpm);
  in.read("max_in_flight", out.max_in_flight);
  if (const toml::table* t = in.table("budget")) {
    TableReader budget_in(*t, in.key_path("budget"), diag);
    BudgetSpec budget;
    std::string period = "month";
    budget_in.read("usd", budget.usd, NumberRule::kNonNegative);
    budget_in.require("usd");
    budget_in.read("period", period);
    budget_in.finish();
    if (period == "day") {
      budget.period = BudgetPeriod::kDay;
    } else if (period == "week") {
      budget.period = BudgetPeriod::kWeek;
    } else if (period == "month") {
      budget.period = BudgetPeriod::kMonth;
    } else {
      diag.error(budget_in.key_path("period"),
                 "must be \"day\", \"week\" or \"month\", got \"" + period + "\"");
    }
    out.budget = budget;
  }
}

std::vector<RouteLimitConfig> read_route_limits(TableReader& in, Diagnostics& diag) {
  std::vector<RouteLimitConfig> out;
  in.for_each_table("route_limits", [&](TableReader& limit_in) {
    RouteLimitConfig limit;
    limit_in.read("route", limit.route, /*required=*/true);
    read_limit_fields(limit_in, limit.limits, diag);
    limit_in.finish();
    out.push_back(std::move(limit));
  });
  return out;
}

KeyConfig read_key(TableReader& in, Diagnostics& diag) {
  KeyConfig out;
  in.read("name", out.name, /*required=*/true);
  in.read("key_env", out.key_env);
  in.read("key_sha256", out.key_sha256);
  in.read("key_salt", out.key_salt);
  in.read("routes", out.routes);
  in.read("providers", out.providers);
  in.read("team", out.team);
  read_limit_fields(in, out.limits, diag);
  out.route_limits = read_route_limits(in, diag);
  read_priority(in, "priority", out.priority);
  read_priority(in, "max_priority", out.max_priority);
  in.finish();
  return out;
}

TeamConfig read_team(TableReader& in, Diagnostics& diag) {
  TeamConfig out;
  in.read("name", out.name, /*required=*/true);
  read_limit_fields(in, out.limits, diag);
  out.route_limits = read_route_limits(in, diag);
  read_priority(in, "priority", out.priority);
  in.finish();
  return out;
}

void read_limits(TableReader& in, LimitsConfig& out) {
  in.read("backend", out.backend);
  in.read("redis_url", out.redis_url);
  in.read("redis_password_env", out.redis_password_env);
  in.read("redis_password_file", out.redis_password_file);
  in.read("redis_ca_file", out.redis_ca_file);
  in.read("timeout_ms", out.timeout_ms, kAtLeastOne);
  in.read("on_backend_error", out.on_backend_error);
  in.read("default_output_tokens", out.default_output_tokens, kAtLeastOne);
  in.finish();
}

void read_adaptive(TableReader& in, AdaptiveRoutingConfig& out) {
  in.read("enabled", out.enabled);
  in.read("latency_weight", out.latency_weight, NumberRule::kNonNegative);
  in.read("cost_weight", out.cost_weight, NumberRule::kNonNegative);
  in.read("load_weight", out.load_weight, NumberRule::kNonNegative);
  in.read("exploration_ratio", out.exploration_ratio, NumberRule::kUnit);
  in.read("min_samples", out.min_samples);
  in.finish();
}

void read_shared_state(TableReader& in, SharedStateConfig& out, Diagnostics& diag) {
  in.read("redis_url", out.redis_url);
  in.read("redis_password_env", out.redis_password_env);
  in.read("key", out.key);
  in.read("max_entries", out.max_entries, 1);
  in.read("replay_entries", out.replay_entries, 0);
  in.finish();
  if (!out.redis_url.empty()) {
    if (auto address = parse_redis_url(out.redis_url); !address) {
      diag.error("shared_state.redis_url", address.error());
    } else if (address->tls) {
      diag.error("shared_state.redis_url", "TLS is supported for [limits], not [shared_state]");
    }
  }
  if (out.key.empty()) diag.error("shared_state.key", "must not be empty");
}

void read_health(TableReader& in, HealthConfig& out) {
  in.read("interval_ms", out.interval_ms, kAtLeastOne);
  in.read("timeout_ms", out.timeout_ms, kAtLeastOne);
  in.read("unhealthy_threshold", out.unhealthy_threshold, kAtLeastOne);
  in.read("healthy_threshold", out.healthy_threshold, kAtLeastOne);
  in.finish();
}

void read_breaker(TableReader& in, BreakerConfig& out) {
  in.read("failure_threshold", out.failure_threshold, kAtLeastOne);
  in.read("open_ms", out.open_ms, kAtLeastOne);
  in.read("half_open_probes", out.half_open_probes, kAtLeastOne);
  in.finish();
}

void read_retry(TableReader& in, RetryConfig& out, Diagnostics& diag) {
  in.read("max_attempts", out.max_attempts, kAtLeastOne);
  in.read("park_on_429_max_ms", out.park_on_429_max_ms);  // 0 = never park on a 429
  in.read("max_fallbacks", out.max_fallbacks);            // 0 = fallbacks off
  if (const toml::array* statuses = in.array("on_status", KeyKind::kIntegerArray)) {
    std::vector<uint32_t> values;
    bool ok = true;
    std::string base = in.key_path("on_status");
    for (size_t i = 0; i < statuses->size(); ++i) {
      const toml::node& node = *statuses->get(i);
      std::string path = index_path(base, i);
      const auto* status = node.as_integer();
      if (status == nullptr) {
        diag.error_at(path, pos_of(node.source()),
                      "expected integer, got " + std::string(type_name(node.type())));
        ok = false;
      } else if (status->get() < kMinHttpStatus || status->get() > kMaxHttpStatus) {
        diag.error_at(
            path, pos_of(node.source()),
            "must be an HTTP status between 100 and 599, got " + std::to_string(status->get()));
        ok = false;
      } else {
        values.push_back(static_cast<uint32_t>(status->get()));
      }
    }
    if (ok) out.on_status = std::move(values);
  }
  in.finish();
}

// The largest export queue: 1M spans is about a gigabyte held for a collector that is away.
constexpr int64_t kMaxTracingQueue = 1 << 20;

void read_tracing(TableReader& in, TracingConfig& out) {
  in.read("otlp_endpoint", out.otlp_endpoint);
  in.read("sample_ratio", out.sample_ratio, NumberRule::kUnit);
  in.read("max_queue", out.max_queue, kAtLeastOne, kMaxTracingQueue);
  in.finish();
}

// Reads the section `key` of `root` with `fn(reader)` when present.
template <typename Fn>
void section(TableReader& root, std::string_view key, Diagnostics& diag, Fn fn) {
  if (const toml::table* t = root.table(key)) {
    TableReader in(*t, root.key_path(key), diag);
    fn(in);
  }
}

}  // namespace

Config read_config(const toml::table& root, Diagnostics& diag) {
  Config config;
  TableReader in(root, "", diag);
  section(in, "server", diag, [&](TableReader& t) { read_server(t, config.server, diag.file()); });
  section(in, "tls", diag, [&](TableReader& t) { read_tls(t, config.tls, diag.file()); });
  section(in, "store", diag, [&](TableReader& t) { read_store(t, config.store); });
  in.for_each_table("providers", [&](TableReader& provider_in) {
    config.providers.push_back(read_provider(provider_in, diag));
  });
  in.for_each_table("routes", [&](TableReader& route_in) {
    config.routes.push_back(read_route(route_in, diag));
  });
  in.for_each_table("provider_groups", [&](TableReader& group_in) {
    config.provider_groups.push_back(read_group(group_in, diag));
  });
  in.for_each_table("keys",
                    [&](TableReader& key_in) { config.keys.push_back(read_key(key_in, diag)); });
  in.for_each_table(
      "teams", [&](TableReader& team_in) { config.teams.push_back(read_team(team_in, diag)); });
  section(in, "limits", diag, [&](TableReader& t) {
    read_limits(t, config.limits);
    config.limits.redis_password_file =
        beside_config(config.limits.redis_password_file, diag.file());
    config.limits.redis_ca_file = beside_config(config.limits.redis_ca_file, diag.file());
  });
  section(in, "usage", diag, [&](TableReader& t) {
    t.read("flush_secs", config.usage.flush_secs, kAtLeastOne);
    t.finish();
  });
  section(in, "metrics", diag, [&](TableReader& t) {
    t.read("per_key", config.metrics.per_key);
    t.finish();
  });
  section(in, "queue", diag, [&](TableReader& t) { read_queue(t, config.queue); });
  section(in, "adaptive_routing", diag,
          [&](TableReader& t) { read_adaptive(t, config.adaptive_routing); });
  section(in, "anthropic", diag, [&](TableReader& t) {
    t.read("default_max_tokens", config.anthropic.default_max_tokens, kAtLeastOne);
    t.finish();
  });
  section(in, "shared_state", diag,
          [&](TableReader& t) { read_shared_state(t, config.shared_state, diag); });
  section(in, "health", diag, [&](TableReader& t) { read_health(t, config.health); });
  section(in, "breaker", diag, [&](TableReader& t) { read_breaker(t, config.breaker); });
  section(in, "retry", diag, [&](TableReader& t) { read_retry(t, config.retry, diag); });
  section(in, "tracing", diag, [&](TableReader& t) { read_tracing(t, config.tracing); });
  in.finish();
  return config;
}

}  // namespace rolter::config_internal
