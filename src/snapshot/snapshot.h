// Snapshot: the immutable routing state built from one validated Config (SPEC §3-§5).
//
// A snapshot holds every route, provider group and provider pin as a RoutePool (candidates plus
// the one balancer shared by all requests and worker threads), the upstream endpoints, the API
// keys and the server limits. It never changes after build_snapshot() returns; a reload builds a
// new one and publishes it (snapshot/snapshot_store.h). A request pins the snapshot it started with
// by holding a shared_ptr to it, so a reload never pulls state from under a request.
//
// Learned evidence (in-flight counts) lives in the LoadTracker, outside the snapshot; candidates
// point into it.
//
// Thread-safety: all const methods may be called from any thread. Balancers are internally
// synchronised (balance/load_balancer.h).
#pragma once

#include <tl/expected.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "balance/adaptive/adaptive_policy.h"
#include "balance/balancer_factory.h"
#include "balance/load_balancer.h"
#include "balance/policy/policy_settings.h"
#include "common/cidr.h"
#include "config/config.h"
#include "fleet/load_tracker.h"
#include "observe/metrics.h"
#include "snapshot/flow_gate.h"
#include "upstream/endpoint.h"

namespace rolter {

enum class ProviderKind { kOpenAi, kAnthropic, kGemini, kDecisionService };
// "openai", "anthropic", "gemini", "decision_service": as the config spells it.
std::string_view provider_kind_name(ProviderKind kind);

struct Provider {
  std::string name;
  ProviderKind kind = ProviderKind::kOpenAi;
  // Resolved from api_key_env or api_key_file when the snapshot is built (start, every reload);
  // empty = none. Never logged.
  std::string api_key;
  // [providers.headers], sent with every request to this provider.
  std::vector<std::pair<std::string, std::string>> headers;
  std::vector<Endpoint> endpoints;
  uint32_t max_loras = 8;
  std::optional<double> price;     // catalog input + output per million tokens, when declared
  std::optional<CostConfig> cost;  // its [cost] table, for spend (SPEC §15)
  // tokenize = "engine" (SPEC §6.15): an instance's POST /tokenize may give a request its token
  // ids, within tokenize_timeout; each call lands in tokenize_instruments (null without metrics).
  bool tokenize_engine = false;
  std::chrono::milliseconds tokenize_timeout{50};
  Metrics::TokenizeInstruments tokenize_instruments{};
};

// One candidate: an instance of a target.
// Catalog prices per million tokens, what a request's spend is counted in (SPEC §15); zero when
// neither the target nor its provider declares a [cost].
struct TokenPrices {
  double input = 0;
  double cached_input = 0;
  double output = 0;

  // The spend of `input` prompt tokens, `cached` of them from the cache, and `output` tokens.
  double usd(uint64_t input_tokens, uint64_t cached_tokens, uint64_t output_tokens) const {
    const uint64_t cached = cached_tokens < input_tokens ? cached_tokens : input_tokens;
    return (static_cast<double>(input_tokens - cached) * input +
            static_cast<double>(cached) * cached_input +
            static_cast<double>(output_tokens) * output) /
           1e6;
  }
};

struct Candidate {
  const Provider* provider = nullptr;
  const Endpoint* endpoint = nullptr;
  InstanceState* state = nullptr;  // owned by the LoadTracker; outlives the snapshot
  // Upstream model written into the forwarded body; empty = passthrough of the requested model.
  std::string upstream_model;
  std::string
      label;  // "<provider>/<upstream model>" for x-rolter-target; "<provider>/*" passthrough
  // The label, with "#<instance>" when the provider has several instances: x-rolter-decision names
  // every candidate without revealing internal URLs.
  std::string explain_name;
  TokenPrices prices;
  Metrics::CandidateInstruments instruments;
  Metrics::EndpointInstruments endpoint_instruments;  // its instance's (parks)
};

// Policy mode (SPEC §7): a policy route's settings, for its balancer and for what the request path
// does before the pick (find the session key, ask the decision service).
struct PolicyRoute {
  PolicySettings settings;  // what the balancer scores with
  // session_affinity's key chain, in order; empty when the plugin is off. Header sources are
  // tried first; body sources only on paths ending in one of body_path_suffixes.
  std::vector<SessionKeySource> session_keys;
  std::vector<std::string> body_path_suffixes;
  // decision_service, when enabled and active (the route has at least 2 distinct target models).
  struct Decision {
    const Provider* provider = nullptr;  // kind decision_service
    std::string model;                   // the decision model
    std::string instructions;
    // Every distinct target model, in target order, with its criteria description (null: none).
    std::vector<std::pair<std::string, std::optional<std::string>>> criteria;
    Metrics::DecisionInstruments instruments{};  // the route's call series; null without metrics
  };
  std::optional<Decision> decision;
};

// A route, a provider group, or a provider pin: the candidates and their shared balancer.
struct RoutePool {
  enum class Kind { kRoute, kGroup, kProviderPin };
  Kind kind = Kind::kRoute;
  std::string name;  // route name, group slug or provider name
  // Its route label in metrics: the name, and for a provider pin "<provider>/*" (its address).
  std::string series;
  std::string strategy;
  // A provider group with at least one passthrough member: the requested model names a LoRA
  // adapter the members serve (SPEC §6.12), so it becomes RouteContext::adapter.
  bool passthrough = false;
  std::vector<Candidate> candidates;
  std::vector<const LoadSignals*> counters;  // counters[i] = &candidates[i].state->load
  std::unique_ptr<LoadBalancer> balancer;
  std::unique_ptr<const PolicyRoute> policy;  // strategy "policy" only
  // Strategy "adaptive" only: the route's learned state, owned by the LoadTracker (outlives the
  // snapshot); its balancer is an AdaptiveBalancer (balance/adaptive/adaptive_balancer.h).
  AdaptiveRouteState* adaptive_state = nullptr;
  Metrics::RouteInstruments instruments;
  Metrics::CandidateInstruments no_target;  // answers the gateway gave itself (502, 503, 504)
  // Routes tried in order when this one cannot answer (RouteConfig::fallbacks), resolved; the
  // fallback_on conditions as a set.
  std::vector<const RoutePool*> fallbacks;
  // fallback_counters[i] counts the hops to fallbacks[i] (from this route, then from
  // fallbacks[i - 1]); empty without metrics.
  std::vector<prometheus::Counter*> fallback_counters;
  struct FallbackOn {
    bool unavailable = true;
    bool rate_limited = false;
    bool context_length = false;
    bool content_filter = false;
  } fallback_on;
  // Flow control (SPEC §19): the route's queue, when it can saturate; null otherwise.
  std::unique_ptr<const FlowGate> flow;
  // SPEC §18: a disaggregated route's prefill step (its candidates and their balancer), and the
  // uncached prompt tokens from which a request uses it; null on every other pool. The route's
  // own candidates are its decode step's: its answers come from them.
  std::unique_ptr<RoutePool> prefill;
  uint64_t min_uncached_tokens = 0;
  Metrics::DisaggregationInstruments disaggregation{};

  Loads loads() const { return Loads(counters); }
};

// What a request's `model` resolved to.
struct ResolvedRoute {
  const RoutePool* pool = nullptr;
  // For group and pin addresses ("slug/model", "provider/model"): the model after the slash, which
  // passthrough candidates forward. Empty for configured routes.
  std::string_view requested_model;

  // The model to forward to candidate i.
  std::string_view upstream_model(size_t i) const {
    const auto& model = pool->candidates[i].upstream_model;
    return model.empty() ? requested_model : std::string_view(model);
  }
};

// Lets the name maps be searched with a string_view, so resolving a request's model allocates
// nothing.
struct NameHash {
  using is_transparent = void;
  size_t operator()(std::string_view name) const { return std::hash<std::string_view>{}(name); }
};
template <typename T>
using NameMap = std::unordered_map<std::string, T, NameHash, std::equal_to<>>;

struct ApiKey {
  std::string name;
  std::array<unsigned char, 32> sha256{};
  // Empty, or a control-plane key's salt: `sha256` is then SHA-256(salt bytes || key), and the
  // key reads "rk-<salt_hex>-<secret>".
  std::string salt_hex;
  std::string salt;                    // the bytes salt_hex spells
  std::vector<std::string> routes;     // allowed addresses (globs); empty = all
  std::vector<std::string> providers;  // allowed providers; empty = all
  std::string team;                    // "" = none
  // Every limit the key answers to (SPEC §15): its own, its team's, and the route globs of each;
  // empty = an unlimited key, which the request path passes on one test.
  std::vector<LimitRule> rules;
  // SPEC §19: the band of its requests (its own `priority`, else its team's), and the highest
  // x-rolter-priority it may ask for; unset = none.
  std::optional<uint8_t> priority;
  std::optional<uint8_t> max_priority;

  // Whether the key may address `model` (a route name or a group/provider address).
  bool allows_address(std::string_view model) const;
  // Whether the key may reach `provider`.
  bool allows_provider(std::string_view provider) const;
};

class Snapshot {
 public:
  uint64_t version() const { return version_; }
  const Config& config() const { return config_; }
  const BreakerParams& breaker() const { return breaker_; }
  // Process-wide metrics, or null when the snapshot was built without them (tests).
  Metrics* metrics() const { return metrics_; }
  // The sanitised [adaptive_routing] policy every adaptive pool of this snapshot runs.
  const AdaptivePolicy& adaptive_policy() const { return adaptive_policy_; }
  // Every pool: routes, then groups, then provider pins.
  const std::vector<std::unique_ptr<RoutePool>>& pools() const { return pools_; }

  // Resolves a request's model: an exact route name first, then "group-slug/model", then
  // "provider/model". nullopt when nothing matches.
  std::optional<ResolvedRoute> resolve(std::string_view model) const;

  // The pool that pins `provider` (all its instances), or null.
  const RoutePool* provider_pool(std::string_view provider) const {
    auto it = pins_.find(provider);
    return it == pins_.end() ? nullptr : it->second;
  }

  // The route names and group addresses, for /v1/models, in config order.
  const std::vector<std::string>& model_ids() const { return model_ids_; }

  // True when no [[keys]] are configured (an open gateway).
  bool open() const { return keys_.empty(); }
  // Returns the key whose SHA-256 matches the presented key, comparing in constant time. A salted
  // key is found by the salt its text carries, and only its digest is computed.
  const ApiKey* authenticate(std::string_view presented_key) const;

  // Whether `client_ip` is one of server.trusted_proxies, whose X-Forwarded-* are believed.
  bool trusted_proxy(std::string_view client_ip) const {
    for (const auto& cidr : trusted_proxies_) {
      if (cidr.contains(client_ip)) return true;
    }
    return false;
  }

 private:
  friend class SnapshotBuilder;

  uint64_t version_ = 0;
  Config config_;
  BreakerParams breaker_;
  Metrics* metrics_ = nullptr;
  // The series the pools' instruments point to: they leave /metrics when the last snapshot that
  // names them is released (observe/series_lease.h).
  SeriesLease series_;
  AdaptivePolicy adaptive_policy_;
  std::vector<std::unique_ptr<Provider>> providers_;
  std::vector<std::unique_ptr<RoutePool>> pools_;
  NameMap<const RoutePool*> routes_;  // by route name
  NameMap<const RoutePool*> groups_;  // by slug
  NameMap<const RoutePool*> pins_;    // by provider name
  std::vector<std::string> model_ids_;
  std::vector<ApiKey> keys_;
  std::vector<Cidr> trusted_proxies_;
};

// Where a secret the config names by variable (a provider's api_key_env, a key's key_env) comes
// from: its value, or nullopt when it is unset or empty.
using SecretLookup = std::function<std::optional<std::string>(const std::string& name)>;

// The process environment.
std::optional<std::string> environment_secret(const std::string& name);

// Builds a snapshot from a validated config. Fails (with one message per problem) when something
// only knowable at build time is wrong, e.g. a secret a key refers to is unset. `metrics` (may be
// null) must outlive the snapshot.
tl::expected<std::shared_ptr<const Snapshot>, std::vector<std::string>> build_snapshot(
    Config config, LoadTracker& tracker, const BalancerDeps& deps, uint64_t version,
    Metrics* metrics = nullptr, const SecretLookup& secrets = environment_secret);

}  // namespace rolter
