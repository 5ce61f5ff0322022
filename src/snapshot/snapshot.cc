#include "snapshot/snapshot.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cstdlib>

#include "balance/strategy_names.h"
#include "balance/strategy_registry.h"
#include "common/glob.h"
#include "common/hex.h"
#include "config/secret_file.h"

namespace rolter {
namespace {

std::array<unsigned char, 32> sha256(std::string_view bytes) {
  std::array<unsigned char, 32> out{};
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), out.data());
  return out;
}

std::optional<std::array<unsigned char, 32>> parse_hex_digest(std::string_view hex) {
  const auto bytes = hex_decode(hex);
  if (!bytes || bytes->size() != 32) return std::nullopt;
  std::array<unsigned char, 32> out{};
  std::copy(bytes->begin(), bytes->end(), out.begin());
  return out;
}

std::optional<double> price_of(const std::optional<CostConfig>& cost) {
  if (!cost) return std::nullopt;
  return cost->input + cost->output;
}

TokenPrices prices_of(const std::optional<CostConfig>& cost) {
  if (!cost) return {};
  return {.input = cost->input,
          .cached_input = cost->cached_input.value_or(cost->input),
          .output = cost->output};
}

// A key's limits (SPEC §15): its own and its route_limits, then its team's. The rule ids name
// the scope only, so every node and every reload count a scope in the same state.
std::vector<LimitRule> limit_rules(const KeyConfig& key, const std::vector<TeamConfig>& teams) {
  std::vector<LimitRule> rules;
  auto add = [&](std::string id, std::string label, const std::string& glob,
                 const LimitSpec& spec) {
    if (spec.empty()) return;
    if (!glob.empty()) {
      id += "|route:" + glob;
      label += " on '" + glob + "'";
    }
    rules.push_back(
        {.id = std::move(id), .label = std::move(label), .route_glob = glob, .spec = spec});
  };
  auto add_scope = [&](const std::string& kind, const std::string& name, const LimitSpec& own,
                       const std::vector<RouteLimitConfig>& by_route) {
    add(kind + ":" + name, kind + " '" + name + "'", "", own);
    for (const auto& r : by_route)
      add(kind + ":" + name, kind + " '" + name + "'", r.route, r.limits);
  };
  add_scope("key", key.name, key.limits, key.route_limits);
  for (const auto& team : teams) {
    if (team.name == key.team) add_scope("team", team.name, team.limits, team.route_limits);
  }
  return rules;
}

}  // namespace

std::string_view provider_kind_name(ProviderKind kind) {
  switch (kind) {
    case ProviderKind::kAnthropic:
      return "anthropic";
    case ProviderKind::kGemini:
      return "gemini";
    case ProviderKind::kDecisionService:
      return "decision_service";
    default:
      return "openai";
  }
}

namespace {

ProviderKind parse_kind(const std::string& kind) {
  if (kind == "anthropic") return ProviderKind::kAnthropic;
  if (kind == "gemini") return ProviderKind::kGemini;
  if (kind == "decision_service") return ProviderKind::kDecisionService;
  return ProviderKind::kOpenAi;
}

// Adds one candidate per instance of `provider`, each with the target weight split evenly over
// the instances (SPEC §4), so scaling a deployment does not change its share.
void add_candidates(RoutePool& pool, std::vector<CandidateSpec>& specs, const Provider& provider,
                    const std::string& upstream_model, double target_weight,
                    const std::optional<CostConfig>& cost, size_t target, LoadTracker& tracker) {
  const std::optional<double> price = price_of(cost);
  const double per_instance = target_weight / static_cast<double>(provider.endpoints.size());
  for (size_t k = 0; k < provider.endpoints.size(); ++k) {
    const Endpoint& endpoint = provider.endpoints[k];
    Candidate c;
    c.provider = &provider;
    c.endpoint = &endpoint;
    c.state = &tracker.instance(provider.name, endpoint.base_url);
    c.upstream_model = upstream_model;
    c.label = provider.name + "/" + (upstream_model.empty() ? "*" : upstream_model);
    c.explain_name = provider.endpoints.size() > 1 ? c.label + "#" + std::to_string(k) : c.label;
    c.prices = prices_of(cost);
    specs.push_back({.identity = c.label + "@" + endpoint.base_url,
                     .model = upstream_model,
                     .target = target,
                     .weight = per_instance,
                     .price = price,
                     .max_loras = provider.max_loras,
                     .evidence = &c.state->evidence,
                     .kv = &c.state->kv,
                     .lmcache = &c.state->lmcache});
    pool.counters.push_back(&c.state->load);
    pool.candidates.push_back(std::move(c));
  }
}

// A policy route's settings (SPEC §7). A plugin is on when its table is present.
std::unique_ptr<PolicyRoute> make_policy_route(
    const RouteConfig& rc, const std::unordered_map<std::string, const Provider*>& providers) {
  auto out = std::make_unique<PolicyRoute>();
  out->settings.target_weights =
      !rc.targets.empty() &&
      std::all_of(rc.targets.begin(), rc.targets.end(),
                  [](const TargetConfig& t) { return t.weight.has_value(); });
  if (!rc.policy) return out;
  const PolicyConfig& pc = *rc.policy;
  out->settings.least_inflight_weight = pc.least_inflight_weight;
  out->settings.session_affinity_weight = pc.session_affinity_weight;
  if (pc.session_affinity_weight) {
    out->session_keys = pc.session_keys;
    out->body_path_suffixes = pc.body_path_suffixes;
  }
  if (pc.decision_service) {
    const auto& ds = *pc.decision_service;
    out->settings.decision_weight = ds.weight;
    PolicyRoute::Decision decision;
    auto it = providers.find(ds.provider);
    decision.provider = it == providers.end() ? nullptr : it->second;
    decision.model = ds.model;
    decision.instructions = ds.instructions;
    for (const TargetConfig& t : rc.targets) {
      const bool seen = std::any_of(decision.criteria.begin(), decision.criteria.end(),
                                    [&](const auto& c) { return c.first == t.model; });
      if (seen) continue;
      auto described = ds.criteria.find(t.model);
      decision.criteria.emplace_back(
          t.model, described == ds.criteria.end() ? std::nullopt : described->second);
    }
    // SPEC §7: inactive with fewer than 2 distinct models; there is nothing to choose.
    if (decision.provider != nullptr && !decision.provider->endpoints.empty() &&
        decision.criteria.size() >= 2) {
      out->decision = std::move(decision);
    }
  }
  return out;
}

}  // namespace

std::optional<ResolvedRoute> Snapshot::resolve(std::string_view model) const {
  // Route names are matched first and may themselves contain '/', e.g. "Qwen/Qwen3-8B".
  if (auto it = routes_.find(model); it != routes_.end()) {
    return ResolvedRoute{it->second, {}};
  }
  const auto slash = model.find('/');
  if (slash == std::string_view::npos || slash + 1 == model.size()) return std::nullopt;
  const std::string_view prefix = model.substr(0, slash);
  const std::string_view rest = model.substr(slash + 1);
  if (auto it = groups_.find(prefix); it != groups_.end()) return ResolvedRoute{it->second, rest};
  if (auto it = pins_.find(prefix); it != pins_.end()) return ResolvedRoute{it->second, rest};
  return std::nullopt;
}

bool ApiKey::allows_address(std::string_view model) const {
  if (routes.empty()) return true;
  for (const auto& pattern : routes) {
    if (glob_match(pattern, model)) return true;
  }
  return false;
}

bool ApiKey::allows_provider(std::string_view provider) const {
  if (providers.empty()) return true;
  for (const auto& allowed : providers) {
    if (allowed == provider) return true;
  }
  return false;
}

const ApiKey* Snapshot::authenticate(std::string_view presented_key) const {
  const auto digest = sha256(presented_key);
  const ApiKey* match = nullptr;
  // Every stored key is compared, in constant time, so timing reveals neither which key nor how
  // much of it matched. A salted key is compared against its own salted digest; the salt is no
  // secret (it is part of the key's text).
  constexpr std::string_view kSaltedPrefix = "rk-";
  constexpr size_t kSaltHex = 16;
  std::string_view salt_hex;
  if (presented_key.starts_with(kSaltedPrefix) &&
      presented_key.size() > kSaltedPrefix.size() + kSaltHex &&
      presented_key[kSaltedPrefix.size() + kSaltHex] == '-') {
    salt_hex = presented_key.substr(kSaltedPrefix.size(), kSaltHex);
  }
  for (const auto& key : keys_) {
    if (key.salt_hex.empty()) {
      if (CRYPTO_memcmp(digest.data(), key.sha256.data(), digest.size()) == 0) match = &key;
    } else if (key.salt_hex == salt_hex) {
      std::string salted = key.salt;
      salted.append(presented_key);
      const auto salted_digest = sha256(salted);
      OPENSSL_cleanse(salted.data(), salted.size());
      if (CRYPTO_memcmp(salted_digest.data(), key.sha256.data(), salted_digest.size()) == 0) {
        match = &key;
      }
    }
  }
  return match;
}

std::optional<std::string> environment_secret(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

// build_snapshot(), one section of the config at a time: the providers first (the pools name
// them), then a pool per route, per provider group and per provider pin, then the keys and the
// server's lists. Every problem is collected, so one failed build reports them all.
class SnapshotBuilder {
 public:
  SnapshotBuilder(LoadTracker& tracker, const BalancerDeps& deps, uint64_t version,
                  Metrics* metrics, const SecretLookup& secrets)
      : tracker_(tracker), deps_(deps), metrics_(metrics), secrets_(secrets) {
    snap_->version_ = version;
    snap_->metrics_ = metrics;
  }

  tl::expected<std::shared_ptr<const Snapshot>, std::vector<std::string>> build(Config config) {
    config_ = &config;  // for the pools' flow gates, while they are built
    snap_->breaker_ = BreakerParams{
        .failure_threshold = std::max<uint32_t>(1, config.breaker.failure_threshold),
        .open_for = std::chrono::milliseconds(config.breaker.open_ms),
        .half_open_probes = std::max<uint32_t>(1, config.breaker.half_open_probes),
    };
    adaptive_policy(config.adaptive_routing);
    for (const auto& pc : config.providers) provider(pc);
    for (const auto& rc : config.routes) route(rc);
    for (const auto& rc : config.routes) fallbacks(rc);
    for (const auto& gc : config.provider_groups) group(gc);
    for (const auto& p : snap_->providers_) pin(*p);
    for (const auto& kc : config.keys) key(kc, config.teams);
    for (const auto& network : config.server.trusted_proxies) {
      if (auto cidr = Cidr::parse(network)) snap_->trusted_proxies_.push_back(*cidr);
    }
    if (!errors_.empty()) return tl::unexpected(std::move(errors_));
    snap_->config_ = std::move(config);
    return std::shared_ptr<const Snapshot>(std::move(snap_));
  }

 private:
  void adaptive_policy(const AdaptiveRoutingConfig& adaptive) {
    snap_->adaptive_policy_ = sanitize_adaptive_policy(AdaptivePolicy{
        .enabled = adaptive.enabled,
        .latency_weight = adaptive.latency_weight,
        .cost_weight = adaptive.cost_weight,
        .load_weight = adaptive.load_weight,
        .exploration_ratio = adaptive.exploration_ratio,
        .min_samples = adaptive.min_samples,
    });
  }

  // A secret named by variable, or an error at `path` when it is unset.
  std::optional<std::string> secret(const std::string& path, const std::string& name) {
    auto value = secrets_(name);
    if (!value) errors_.push_back(path + ": environment variable " + name + " is not set");
    return value;
  }

  void provider(const ProviderConfig& pc) {
    auto provider = std::make_unique<Provider>();
    provider->name = pc.name;
    provider->kind = parse_kind(pc.kind);
    provider->max_loras = pc.max_loras;
    provider->price = price_of(pc.cost);
    provider->cost = pc.cost;
    provider->tokenize_engine = pc.tokenize == "engine";
    provider->tokenize_timeout = std::chrono::milliseconds(pc.tokenize_timeout_ms);
    if (provider->tokenize_engine && metrics_ != nullptr) {
      provider->tokenize_instruments = metrics_->tokenize(pc.name, snap_->series_);
    }
    if (!pc.api_key_env.empty()) {
      auto key = secret("providers." + pc.name + ".api_key_env", pc.api_key_env);
      if (key) provider->api_key = std::move(*key);
    } else if (!pc.api_key_file.empty()) {
      auto key = read_secret_file(pc.api_key_file);
      if (key) {
        provider->api_key = std::move(*key);
      } else {
        errors_.push_back("providers." + pc.name + ".api_key_file: " + key.error());
      }
    }
    provider->headers = pc.headers;
    for (const auto& ic : pc.instances) {
      auto endpoint = parse_endpoint(ic.base_url);
      if (!endpoint) {
        errors_.push_back("providers." + pc.name + ".base_url: " + endpoint.error());
        continue;
      }
      provider->endpoints.push_back(std::move(*endpoint));
    }
    providers_.emplace(provider->name, provider.get());
    snap_->providers_.push_back(std::move(provider));
  }

  // The provider a target names, when it can take traffic (an unknown one is reported above).
  const Provider* usable(const std::string& name) const {
    auto it = providers_.find(name);
    return it == providers_.end() || it->second->endpoints.empty() ? nullptr : it->second;
  }

  // An adaptive pool's policy and its state (kept by the tracker under `key`, so it survives
  // reloads). The policy lives in the snapshot, as long as the balancer that reads it.
  void adaptive_settings(RoutePool& pool, const std::string& key, RouteSettings& settings) {
    if (pool.strategy != strategy::kAdaptive) return;
    pool.adaptive_state = &tracker_.adaptive_route(key);
    settings.adaptive = &snap_->adaptive_policy_;
    settings.adaptive_state = pool.adaptive_state;
  }

  void route(const RouteConfig& rc) {
    auto pool = std::make_unique<RoutePool>();
    pool->kind = RoutePool::Kind::kRoute;
    pool->name = rc.name;
    pool->strategy = rc.strategy;
    std::vector<CandidateSpec> specs;
    for (size_t t = 0; t < rc.targets.size(); ++t) {
      const TargetConfig& tc = rc.targets[t];
      const Provider* p = usable(tc.provider);
      if (p == nullptr) continue;
      add_candidates(*pool, specs, *p, tc.model, tc.weight.value_or(1.0),
                     tc.cost ? tc.cost : p->cost, t, tracker_);
    }
    std::vector<std::pair<std::string, double>> pipeline;
    for (const auto& scorer : rc.pipeline) pipeline.emplace_back(scorer.name, scorer.weight);
    RouteSettings settings{.pipeline = pipeline};
    if (const StrategyInfo* info = find_strategy(rc.strategy);
        info != nullptr && info->table == StrategyTable::kPolicy) {
      auto policy = make_policy_route(rc, providers_);
      if (metrics_ != nullptr && policy->decision) {
        policy->decision->instruments = metrics_->decision(rc.name, snap_->series_);
      }
      pool->policy = std::move(policy);
      settings.policy = &pool->policy->settings;
    }
    adaptive_settings(*pool, rc.name, settings);
    if (rc.mode == "disaggregated" && rc.prefill) {
      pool->prefill = prefill_stage(rc);
      if (pool->prefill == nullptr) return;
      pool->min_uncached_tokens = rc.min_uncached_tokens;
      if (metrics_ != nullptr) {
        pool->disaggregation = metrics_->disaggregation(rc.name, snap_->series_);
      }
    }
    if (auto* built = finish(std::move(pool), specs, settings)) {
      snap_->routes_.emplace(rc.name, built);
      snap_->model_ids_.push_back(rc.name);
    }
  }

  // The prefill step of a disaggregated route (SPEC §18): its own pool, named "<route>/prefill"
  // in metrics, owned by the route rather than listed among the snapshot's pools. Its strategy
  // defaults to precise_cache_aware when its providers publish KV events, else cache_aware.
  std::unique_ptr<RoutePool> prefill_stage(const RouteConfig& rc) {
    auto pool = std::make_unique<RoutePool>();
    pool->kind = RoutePool::Kind::kRoute;
    pool->name = rc.name + "/prefill";
    pool->strategy = rc.prefill->strategy;
    bool kv_events = false;
    std::vector<CandidateSpec> specs;
    for (size_t t = 0; t < rc.prefill->targets.size(); ++t) {
      const TargetConfig& tc = rc.prefill->targets[t];
      const Provider* p = usable(tc.provider);
      if (p == nullptr) continue;
      add_candidates(*pool, specs, *p, tc.model, tc.weight.value_or(1.0),
                     tc.cost ? tc.cost : p->cost, t, tracker_);
      for (const ProviderConfig& pc : config_->providers) {
        if (pc.name != tc.provider) continue;
        for (const InstanceConfig& ic : pc.instances) kv_events = kv_events || ic.kv_events;
        kv_events = kv_events || (pc.discover && pc.discover->kv_events);
      }
    }
    if (pool->strategy.empty()) {
      pool->strategy = kv_events ? strategy::kPreciseCacheAware : strategy::kCacheAware;
    }
    BalancerDeps deps = deps_;
    deps.pool = pool->name;
    auto balancer = make_balancer(pool->strategy, specs, deps, {});
    if (!balancer) {
      errors_.push_back(pool->name + ": " + balancer.error());
      return nullptr;
    }
    pool->balancer = std::move(*balancer);
    pool->series = pool->name;
    if (metrics_ != nullptr) {
      SeriesLease& lease = snap_->series_;
      pool->instruments = metrics_->route(pool->series, lease);
      pool->no_target = metrics_->candidate(pool->series, pool->strategy, "none", lease);
      for (auto& c : pool->candidates) {
        c.instruments = metrics_->candidate(pool->series, pool->strategy, c.label, lease);
        c.endpoint_instruments = metrics_->endpoint(c.state->identity, lease);
      }
    }
    return pool;
  }

  // A route's fallbacks, once every route is built (the config validator refused unknown names
  // and cycles).
  void fallbacks(const RouteConfig& rc) {
    RoutePool* pool = nullptr;
    for (auto& p : snap_->pools_) {
      if (p->kind == RoutePool::Kind::kRoute && p->name == rc.name) pool = p.get();
    }
    if (pool == nullptr) return;
    for (const auto& name : rc.fallbacks) {
      auto it = snap_->routes_.find(name);
      if (it == snap_->routes_.end()) continue;
      if (metrics_ != nullptr) {
        const std::string& from =
            pool->fallbacks.empty() ? pool->name : pool->fallbacks.back()->name;
        pool->fallback_counters.push_back(metrics_->fallback(from, name, snap_->series_));
      }
      pool->fallbacks.push_back(it->second);
    }
    if (!rc.fallback_on.empty()) {
      pool->fallback_on = {.unavailable = false};
      for (const auto& on : rc.fallback_on) {
        if (on == "unavailable") pool->fallback_on.unavailable = true;
        if (on == "rate_limited") pool->fallback_on.rate_limited = true;
        if (on == "context_length") pool->fallback_on.context_length = true;
        if (on == "content_filter") pool->fallback_on.content_filter = true;
      }
    }
  }

  void group(const ProviderGroupConfig& gc) {
    auto pool = std::make_unique<RoutePool>();
    pool->kind = RoutePool::Kind::kGroup;
    pool->name = gc.slug;
    pool->strategy = gc.strategy;
    std::vector<CandidateSpec> specs;
    for (size_t m = 0; m < gc.members.size(); ++m) {
      const GroupMemberConfig& member = gc.members[m];
      const Provider* p = usable(member.provider);
      if (p == nullptr) continue;
      add_candidates(*pool, specs, *p, member.upstream_model, member.weight, p->cost, m, tracker_);
      if (member.upstream_model.empty()) pool->passthrough = true;
    }
    // A group's state is keyed by its address, "<slug>/*", as its metrics series are.
    RouteSettings settings;
    adaptive_settings(*pool, gc.slug + "/*", settings);
    if (auto* built = finish(std::move(pool), specs, settings)) {
      snap_->groups_.emplace(gc.slug, built);
      for (const auto& member : gc.members) {
        if (!member.upstream_model.empty()) {
          snap_->model_ids_.push_back(gc.slug + "/" + member.upstream_model);
        }
      }
    }
  }

  // "provider/model" pins one provider. Its pool is built once here rather than per request, and
  // balances over the provider's instances by load.
  void pin(const Provider& provider) {
    if (provider.kind == ProviderKind::kDecisionService || provider.endpoints.empty()) return;
    auto pool = std::make_unique<RoutePool>();
    pool->kind = RoutePool::Kind::kProviderPin;
    pool->name = provider.name;
    pool->strategy = strategy::kPowerOfTwo;
    std::vector<CandidateSpec> specs;
    add_candidates(*pool, specs, provider, "", 1.0, provider.cost, 0, tracker_);
    if (auto* built = finish(std::move(pool), specs)) snap_->pins_.emplace(provider.name, built);
  }

  // The pool's balancer and instruments; the pool joins the snapshot. Null when its strategy
  // refuses the candidates (the error is collected).
  const RoutePool* finish(std::unique_ptr<RoutePool> pool, const std::vector<CandidateSpec>& specs,
                          const RouteSettings& settings = {}) {
    BalancerDeps deps = deps_;
    deps.pool = pool->name;
    auto balancer = make_balancer(pool->strategy, specs, deps, settings);
    if (!balancer) {
      errors_.push_back(pool->name + ": " + balancer.error());
      return nullptr;
    }
    pool->balancer = std::move(*balancer);
    // Pins are addressed as "<provider>/<any model>", so their series is named that way.
    pool->series = pool->kind == RoutePool::Kind::kProviderPin ? pool->name + "/*" : pool->name;
    const std::string& series = pool->series;
    pool->flow = make_flow_gate(*pool, series, *config_, route_priority(*pool), snap_->breaker_,
                                tracker_, metrics_);
    if (metrics_ != nullptr) {
      SeriesLease& lease = snap_->series_;
      pool->instruments = metrics_->route(series, lease);
      pool->no_target = metrics_->candidate(series, pool->strategy, "none", lease);
      for (auto& c : pool->candidates) {
        c.instruments = metrics_->candidate(series, pool->strategy, c.label, lease);
        c.endpoint_instruments = metrics_->endpoint(c.state->identity, lease);
      }
      if (pool->adaptive_state != nullptr) adaptive_series(*pool, lease);
    }
    snap_->pools_.push_back(std::move(pool));
    return snap_->pools_.back().get();
  }

  std::optional<uint32_t> route_priority(const RoutePool& pool) const {
    if (pool.kind != RoutePool::Kind::kRoute) return std::nullopt;
    for (const auto& rc : config_->routes) {
      if (rc.name == pool.name) return rc.priority;
    }
    return std::nullopt;
  }

  // An adaptive pool's series, named as its state and its telemetry samples name it: a group by its
  // address "<slug>/*", a target's picks by its label, its score by its explain name.
  void adaptive_series(const RoutePool& pool, SeriesLease& lease) {
    const std::string route = pool.kind == RoutePool::Kind::kGroup ? pool.name + "/*" : pool.name;
    metrics_->adaptive_route(route, lease);
    for (const auto& c : pool.candidates) {
      metrics_->adaptive_target(route, c.label, c.explain_name, lease);
    }
  }

  void key(const KeyConfig& kc, const std::vector<TeamConfig>& teams) {
    ApiKey key;
    key.name = kc.name;
    std::optional<uint32_t> priority = kc.priority;
    for (const auto& team : teams) {
      if (!priority && !kc.team.empty() && team.name == kc.team) priority = team.priority;
    }
    if (priority) key.priority = static_cast<uint8_t>(*priority);
    if (kc.max_priority) key.max_priority = static_cast<uint8_t>(*kc.max_priority);
    key.routes = kc.routes;
    key.providers = kc.providers;
    key.team = kc.team;
    key.rules = limit_rules(kc, teams);
    for (LimitRule& rule : key.rules) rule.cell = tracker_.limits().cells().cell(rule.id);
    if (!kc.key_env.empty()) {
      auto value = secret("keys." + kc.name + ".key_env", kc.key_env);
      if (!value) return;
      key.sha256 = sha256(*value);
      OPENSSL_cleanse(value->data(), value->size());
    } else if (auto digest = parse_hex_digest(kc.key_sha256)) {
      key.sha256 = *digest;
      key.salt_hex = kc.key_salt;
      key.salt = hex_decode(kc.key_salt).value_or("");  // validated as hex by the loader
    } else {
      errors_.push_back("keys." + kc.name + ".key_sha256: not 64 hex digits");
      return;
    }
    snap_->keys_.push_back(std::move(key));
  }

  LoadTracker& tracker_;
  const Config* config_ = nullptr;  // the config being built, during build()
  const BalancerDeps& deps_;
  Metrics* const metrics_;
  const SecretLookup& secrets_;
  std::shared_ptr<Snapshot> snap_ = std::make_shared<Snapshot>();
  std::unordered_map<std::string, const Provider*> providers_;
  std::vector<std::string> errors_;
};

tl::expected<std::shared_ptr<const Snapshot>, std::vector<std::string>> build_snapshot(
    Config config, LoadTracker& tracker, const BalancerDeps& deps, uint64_t version,
    Metrics* metrics, const SecretLookup& secrets) {
  return SnapshotBuilder(tracker, deps, version, metrics, secrets).build(std::move(config));
}

}  // namespace rolter
