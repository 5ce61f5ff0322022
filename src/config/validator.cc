#include "config/validator.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "balance/balancer_factory.h"
#include "balance/scorer_registry.h"
#include "balance/strategy_names.h"
#include "balance/strategy_registry.h"
#include "common/cidr.h"
#include "common/join.h"
#include "config/discover.h"
#include "config/flow_fields.h"
#include "config/secret_file.h"
#include "config/url.h"

namespace rolter::config_internal {
namespace {

constexpr std::string_view kPolicyStrategy = strategy::kPolicy;
// A group slug is the first segment of "slug/model" addresses, so it must be URL- and
// label-safe; 63 characters is the DNS label limit, which keeps slugs usable as host names too.
constexpr size_t kMaxSlugLength = 63;
constexpr size_t kSha256HexLength = 64;
// A value that is not a variable name is often the secret itself, pasted in: never echo it.
constexpr const char* kNotAnEnvName =
    "must name an environment variable (^[A-Za-z_][A-Za-z0-9_]*$), not hold the secret itself; "
    "the value is not shown";

bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// ^[a-z0-9-]+$
bool is_provider_name(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!is_lower_alnum(c) && c != '-') return false;
  }
  return true;
}

// ^[a-z0-9][a-z0-9-]{0,62}$
bool is_group_slug(std::string_view slug) {
  if (slug.empty() || slug.size() > kMaxSlugLength || !is_lower_alnum(slug.front())) return false;
  return is_provider_name(slug);
}

// ^[A-Za-z_][A-Za-z0-9_]*$, what a POSIX shell accepts as a variable name.
bool is_env_name(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

// RFC 9110 token characters.
bool is_header_name(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

bool is_reserved_header(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view reserved :
       {"host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te",
        "trailer", "proxy-connection", "authorization", "x-api-key", "x-goog-api-key"}) {
    if (lower == reserved) return true;
  }
  return false;
}

bool is_sha256_hex(std::string_view text) {
  if (text.size() != kSha256HexLength) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool is_salt_hex(std::string_view text) {
  constexpr size_t kSaltHexLength = 16;
  if (text.size() != kSaltHexLength) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

std::string quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

// A URL as an error may show it: any password in its userinfo is replaced, so a pasted
// "postgres://user:secret@host" or "http://user:secret@engine" never reaches a log.
std::string quoted_url(std::string_view url) {
  const size_t scheme = url.find("://");
  const size_t start = scheme == std::string_view::npos ? 0 : scheme + 3;
  const size_t end = url.find_first_of("/?#", start);
  const std::string_view authority =
      url.substr(start, end == std::string_view::npos ? end : end - start);
  const size_t at = authority.rfind('@');
  if (at == std::string_view::npos) return quoted(url);
  const size_t colon = authority.substr(0, at).find(':');
  std::string shown(url.substr(0, start));
  shown.append(authority.substr(0, colon == std::string_view::npos ? at : colon));
  shown.append(":***");
  shown.append(url.substr(start + at));
  return quoted(shown);
}

std::string strategy_list(bool with_policy) {
  return join(known_strategies()) + (with_policy ? ", policy" : "");
}

// Remembers the first path of each name and reports later duplicates.
class UniqueNames {
 public:
  UniqueNames(Diagnostics& diag, std::string what) : diag_(diag), what_(std::move(what)) {}

  void add(const std::string& name, const std::string& path) {
    if (name.empty()) return;
    auto [it, inserted] = first_.emplace(name, path);
    if (!inserted) {
      diag_.error(path, "duplicate " + what_ + " " + quoted(name) + " (first defined on line " +
                            std::to_string(diag_.where(it->second).line) + ")");
    }
  }

 private:
  Diagnostics& diag_;
  std::string what_;
  std::unordered_map<std::string, std::string> first_;
};

class Validator {
 public:
  Validator(const Config& config, Diagnostics& diag, bool local_secrets)
      : config_(config), diag_(diag), local_secrets_(local_secrets) {}

  void run() {
    check_server();
    check_tls();
    check_store();
    check_providers();
    check_routes();
    check_fallbacks();
    check_groups();
    check_keys();
    check_teams();
    check_limits_backend();
    check_flow(config_, diag_);
    check_tracing();
  }

 private:
  void check_server() {
    auto listen = parse_host_port(config_.server.listen, /*allow_port_zero=*/true);
    if (!listen) diag_.error("server.listen", listen.error());
    const auto& metrics_listen = config_.server.metrics_listen;
    if (!metrics_listen.empty()) {
      auto parsed = parse_host_port(metrics_listen, /*allow_port_zero=*/true);
      if (!parsed) diag_.error("server.metrics_listen", parsed.error());
    }
    const auto& proxies = config_.server.trusted_proxies;
    for (size_t i = 0; i < proxies.size(); ++i) {
      auto cidr = Cidr::parse(proxies[i]);
      if (!cidr) {
        diag_.error(index_path("server.trusted_proxies", i),
                    quoted(proxies[i]) + ": " + cidr.error());
      }
    }
    check_access_log();
  }

  // "stderr", "off" or a file. Where the config runs, the file must be one rolter can append to,
  // or create: reported now, by key, rather than when the first request is logged. A control
  // plane cannot see its nodes' disks; a node that cannot open it keeps its previous destination.
  void check_access_log() {
    const std::string& file = config_.server.access_log;
    if (file == "stderr" || file == "off") return;
    if (file.empty()) {
      diag_.error("server.access_log", R"(must be "stderr", "off" or a file path)");
      return;
    }
    if (file.back() == '/') {
      diag_.error("server.access_log", quoted(file) + " names a directory, not a file");
      return;
    }
    if (!local_secrets_) return;
    struct stat st {};
    if (::stat(file.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) {
        diag_.error("server.access_log", quoted(file) + " is a directory, not a file");
      } else if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode)) {
        diag_.error("server.access_log", quoted(file) + " is not a regular file");
      } else if (::access(file.c_str(), W_OK) != 0) {
        diag_.error("server.access_log",
                    "cannot write " + quoted(file) + ": " + std::strerror(errno));
      }
      return;
    }
    if (errno != ENOENT) {
      diag_.error("server.access_log",
                  "cannot write " + quoted(file) + ": " + std::strerror(errno));
      return;
    }
    // (<filesystem> would bring std::quoted into this file's unqualified calls.)
    const size_t slash = file.rfind('/');
    const std::string dir = slash == std::string::npos ? "."
                            : slash == 0               ? "/"
                                                       : file.substr(0, slash);
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      diag_.error("server.access_log",
                  "cannot create " + quoted(file) + ": no directory " + quoted(dir));
    } else if (::access(dir.c_str(), W_OK | X_OK) != 0) {
      diag_.error("server.access_log", "cannot create " + quoted(file) + " in " + quoted(dir) +
                                           ": " + std::strerror(errno));
    }
  }

  // The listener loads these at start-up; a file it cannot read is reported now, by key.
  void check_tls() {
    const bool has_cert = diag_.was_read("tls.cert");
    const bool has_key = diag_.was_read("tls.key");
    if (has_cert != has_key) {
      diag_.error(has_cert ? "tls.key" : "tls.cert", "set both tls.cert and tls.key, or neither");
    }
    check_readable_file(config_.tls.cert, has_cert, "tls.cert");
    check_readable_file(config_.tls.key, has_key, "tls.key");
  }

  void check_readable_file(const std::string& file, bool set, const std::string& path) {
    if (!set) return;
    if (file.empty()) {
      diag_.error(path, "must not be empty");
      return;
    }
    std::FILE* f = std::fopen(file.c_str(), "rb");
    if (f == nullptr) {
      diag_.error(path, "cannot read " + quoted(file) + ": " + std::strerror(errno));
      return;
    }
    // A directory opens; only a read reports it.
    char byte;
    const bool unreadable = std::fread(&byte, 1, 1, f) == 0 && std::ferror(f) != 0;
    const int read_errno = errno;
    std::fclose(f);
    if (unreadable) {
      diag_.error(path, "cannot read " + quoted(file) + ": " + std::strerror(read_errno));
    }
  }

  void check_store() {
    const std::string& url = config_.store.url;
    if (url.empty() || starts_with(url, "sqlite:") || starts_with(url, "postgres://") ||
        starts_with(url, "postgresql://")) {
      return;
    }
    diag_.error("store.url", "expected sqlite:PATH or postgres://…, got " + quoted_url(url));
  }

  void check_url(const std::string& url, const std::string& path) {
    auto parsed = parse_url(url);
    if (!parsed) diag_.error(path, "bad URL " + quoted_url(url) + ": " + parsed.error());
  }

  // A ZeroMQ endpoint the KV-event subscriber connects to.
  void check_zmq_endpoint(const std::string& endpoint, const std::string& path) {
    if (starts_with(endpoint, "tcp://")) {
      auto hp = parse_host_port(std::string_view(endpoint).substr(6), /*allow_port_zero=*/false);
      if (!hp) diag_.error(path, "bad endpoint " + quoted_url(endpoint) + ": " + hp.error());
    } else if (!(starts_with(endpoint, "ipc://") && endpoint.size() > 6)) {
      diag_.error(path, "expected tcp://host:port or ipc://path, got " + quoted_url(endpoint));
    }
  }

  void check_instance(const InstanceConfig& inst, const std::string& path) {
    check_url(inst.base_url, child_path(path, "base_url"));
    if (inst.kv_events) {
      std::string kv = child_path(path, "kv_events");
      check_zmq_endpoint(inst.kv_events->endpoint, child_path(kv, "endpoint"));
      if (!inst.kv_events->replay_endpoint.empty()) {
        check_zmq_endpoint(inst.kv_events->replay_endpoint, child_path(kv, "replay_endpoint"));
      }
    }
    if (inst.lmcache) {
      check_url(inst.lmcache->endpoint, child_path(child_path(path, "lmcache"), "endpoint"));
    }
  }

  // A provider found by DNS (SPEC §17): its URL, interval and resolver, and its kv_events and
  // lmcache tables checked as the instance at 127.0.0.1 would have them.
  void check_discover(const DiscoverConfig& d, const std::string& path) {
    if (auto spec = parse_discover(d.url); !spec) {
      diag_.error(child_path(path, "discover"),
                  "bad discover " + quoted_url(d.url) + ": " + spec.error());
    }
    if (d.interval_ms < 500) {
      diag_.error(child_path(path, "discover_interval_ms"), "must be at least 500");
    }
    if (!d.resolver.empty()) {
      if (auto server = parse_discover_resolver(d.resolver); !server) {
        diag_.error(child_path(path, "discover_resolver"), server.error());
      }
    }
    if (d.kv_events && d.kv_events->endpoint.find(kHostPlaceholder) == std::string::npos) {
      diag_.error(child_path(child_path(path, "kv_events"), "endpoint"),
                  "with discover, name each instance's stream by its address: e.g. "
                  "\"tcp://{host}:5557\"");
    }
    check_instance(discovered_instance(d, {.host = "127.0.0.1", .port = 80}), path);
  }

  void check_providers() {
    UniqueNames names(diag_, "provider name");
    for (size_t i = 0; i < config_.providers.size(); ++i) {
      const ProviderConfig& p = config_.providers[i];
      std::string path = index_path("providers", i);
      std::string name_path = child_path(path, "name");
      if (!is_provider_name(p.name)) {
        diag_.error(name_path, "provider name " + quoted(p.name) + " must match ^[a-z0-9-]+$");
      }
      names.add(p.name, name_path);
      providers_.emplace(p.name, &p);
      if (p.kind != "openai" && p.kind != "anthropic" && p.kind != "gemini" &&
          p.kind != "decision_service") {
        diag_.error(child_path(path, "kind"), "unknown kind " + quoted(p.kind) +
                                                  "; expected openai, anthropic, gemini or "
                                                  "decision_service");
      }
      check_provider_key(p, path);
      check_provider_headers(p, path);
      if (!p.health_path.empty() && p.health_path.front() != '/') {
        diag_.error(child_path(path, "health_path"), "must start with '/'");
      }
      // The instance list came either from base_url or from [[providers.instances]].
      std::string instances_path = child_path(path, "instances");
      bool listed = diag_.was_read(instances_path);
      std::unordered_map<std::string, size_t> seen;
      for (size_t j = 0; j < p.instances.size(); ++j) {
        std::string inst_path = listed ? index_path(instances_path, j) : path;
        check_instance(p.instances[j], inst_path);
        if (p.instances[j].base_url.empty()) continue;
        auto [it, inserted] = seen.emplace(p.instances[j].base_url, j);
        if (!inserted) {
          diag_.error(child_path(inst_path, "base_url"),
                      "duplicate instance " + quoted(p.instances[j].base_url));
        }
      }
      if (p.discover) check_discover(*p.discover, path);
      if (p.load_source != "local" && p.load_source != "engine_metrics") {
        diag_.error(
            child_path(path, "load_source"),
            "unknown load_source " + quoted(p.load_source) + "; expected local or engine_metrics");
      }
      if (p.tokenize != "none" && p.tokenize != "engine") {
        diag_.error(child_path(path, "tokenize"),
                    "unknown tokenize " + quoted(p.tokenize) + "; expected none or engine");
      }
      if (p.role != "both" && p.role != "prefill" && p.role != "decode") {
        diag_.error(child_path(path, "role"),
                    "unknown role " + quoted(p.role) + "; expected prefill, decode or both");
      } else if (p.role != "both" && p.kind != "openai") {
        diag_.error(child_path(path, "role"),
                    "only an openai provider (a vLLM or SGLang engine) takes a role in "
                    "prefill/decode disaggregation; this one has kind " + p.kind);
      }
    }
  }

  void check_provider_key(const ProviderConfig& p, const std::string& path) {
    const std::string env_path = child_path(path, "api_key_env");
    const std::string file_path = child_path(path, "api_key_file");
    if (!p.api_key_env.empty() && !p.api_key_file.empty()) {
      diag_.error(file_path, "set api_key_env or api_key_file, not both");
      return;
    }
    if (!p.api_key_env.empty()) {
      if (!is_env_name(p.api_key_env)) {
        diag_.error(env_path, kNotAnEnvName);
      } else if (local_secrets_) {
        const char* value = std::getenv(p.api_key_env.c_str());
        if (value == nullptr || *value == '\0') {
          diag_.error(env_path, "environment variable " + p.api_key_env + " is not set or empty");
        }
      }
    }
    if (diag_.was_read(file_path) && p.api_key_file.empty()) {
      diag_.error(file_path, "must not be empty");
    } else if (!p.api_key_file.empty() && local_secrets_) {
      auto key = read_secret_file(p.api_key_file);
      if (!key) diag_.error(file_path, key.error());
    }
  }

  // Fixed headers may add fields, not replace the proxy's framing or its credentials.
  void check_provider_headers(const ProviderConfig& p, const std::string& path) {
    const std::string headers_path = child_path(path, "headers");
    for (const auto& [name, value] : p.headers) {
      const std::string at = child_path(headers_path, name);
      if (!is_header_name(name)) {
        diag_.error(at, quoted(name) + " is not a header name");
      } else if (is_reserved_header(name)) {
        diag_.error(at, quoted(name) + " is set by the gateway itself");
      } else if (value.find_first_of("\r\n") != std::string::npos) {
        diag_.error(at, "a header value must be one line");
      }
    }
  }

  // The provider called `name`, or null after reporting it at `path`.
  const ProviderConfig* find_provider(const std::string& name, const std::string& path) {
    auto it = providers_.find(name);
    if (it != providers_.end()) return it->second;
    diag_.error(path, "unknown provider " + quoted(name));
    return nullptr;
  }

  // A KV-event or LMCache strategy on a route none of whose instances has that source: it will
  // only ever pick by load, which is worth saying (SPEC §6.8, §6.9).
  void warn_without_telemetry(const RouteConfig& r, const std::string& strategy_path) {
    const StrategyInfo* info = find_strategy(r.strategy);
    if (info == nullptr || info->telemetry == StrategyTelemetry::kNone) return;
    const bool kv = info->telemetry == StrategyTelemetry::kKvEvents;
    const bool lmcache = info->telemetry == StrategyTelemetry::kLmcache;
    for (const TargetConfig& t : r.targets) {
      auto it = providers_.find(t.provider);
      if (it == providers_.end()) continue;
      // A discovered provider's templates give every instance it finds the same sources.
      if (const auto& d = it->second->discover;
          d && ((kv && d->kv_events) || (lmcache && d->lmcache))) {
        return;
      }
      for (const InstanceConfig& inst : it->second->instances) {
        if ((kv && inst.kv_events) || (lmcache && inst.lmcache)) return;
      }
    }
    diag_.warning(strategy_path,
                  "strategy " + r.strategy + " needs [providers." +
                      std::string(telemetry_name(info->telemetry)) + "]" +
                      " on its providers' instances; without it every pick falls back to least "
                      "load");
  }

  // A provider that routes traffic, i.e. anything but a decision service.
  void check_traffic_provider(const std::string& name, const std::string& path) {
    if (name.empty()) return;  // missing: reported by the walker
    const ProviderConfig* p = find_provider(name, path);
    if (p != nullptr && p->kind == "decision_service") {
      diag_.error(path, "provider " + quoted(name) +
                            " is a decision_service; it may only be used by "
                            "[routes.policy.decision_service]");
    }
  }

  // [routes.pipeline]: scorer = weight, only on a pipeline route, at least one weight above 0.
  void check_pipeline(const RouteConfig& r, const std::string& route_path) {
    if (r.pipeline.empty()) return;
    const std::string pipeline_path = child_path(route_path, "pipeline");
    const StrategyInfo* info = find_strategy(r.strategy);
    if (info == nullptr || info->table != StrategyTable::kPipeline) {
      diag_.error(pipeline_path, "[routes.pipeline] applies only to strategy = \"" +
                                     std::string(strategy::kPipeline) + "\"");
      return;
    }
    bool any_positive = false;
    for (const PipelineScorerConfig& scorer : r.pipeline) {
      any_positive = any_positive || scorer.weight > 0;
      if (!is_known_scorer(scorer.name)) {
        diag_.error(child_path(pipeline_path, scorer.name),
                    "unknown scorer " + quoted(scorer.name) + "; known: " + join(known_scorers()));
      }
    }
    if (!any_positive) diag_.error(pipeline_path, "needs at least one scorer with weight > 0");
  }

  // fallbacks name other routes, fallback_on known conditions, and the graph has no cycle (a
  // request could otherwise hop forever, or up to max_fallbacks in a circle).
  void check_fallbacks() {
    std::unordered_map<std::string, size_t> index;
    for (size_t i = 0; i < config_.routes.size(); ++i) index.emplace(config_.routes[i].name, i);
    for (size_t i = 0; i < config_.routes.size(); ++i) {
      const RouteConfig& r = config_.routes[i];
      const std::string path = index_path("routes", i);
      for (size_t j = 0; j < r.fallbacks.size(); ++j) {
        const std::string at = index_path(child_path(path, "fallbacks"), j);
        if (index.count(r.fallbacks[j]) == 0) {
          diag_.error(at, "unknown route " + quoted(r.fallbacks[j]));
        } else if (r.fallbacks[j] == r.name) {
          diag_.error(at, "a route cannot fall back to itself");
        }
      }
      for (size_t j = 0; j < r.fallback_on.size(); ++j) {
        const std::string& on = r.fallback_on[j];
        if (on != "unavailable" && on != "rate_limited" && on != "context_length" &&
            on != "content_filter") {
          diag_.error(index_path(child_path(path, "fallback_on"), j),
                      "unknown condition " + quoted(on) +
                          "; expected unavailable, rate_limited, context_length or "
                          "content_filter");
        }
      }
      if (!r.fallback_on.empty() && r.fallbacks.empty()) {
        diag_.warning(child_path(path, "fallback_on"), "has no effect without fallbacks");
      }
    }
    // Depth-first search; a route met again on the current path closes a cycle.
    std::vector<int> state(config_.routes.size(), 0);  // 0 new, 1 on the path, 2 done
    std::vector<std::string> trail;
    auto visit = [&](auto& self, size_t i) -> void {
      state[i] = 1;
      trail.push_back(config_.routes[i].name);
      for (const auto& next : config_.routes[i].fallbacks) {
        auto it = index.find(next);
        if (it == index.end() || next == config_.routes[i].name) continue;
        if (state[it->second] == 1) {
          std::string cycle;
          bool in = false;
          for (const auto& name : trail) {
            in = in || name == next;
            if (in) cycle += name + " -> ";
          }
          diag_.error(child_path(index_path("routes", i), "fallbacks"),
                      "fallbacks form a loop: " + cycle + next);
        } else if (state[it->second] == 0) {
          self(self, it->second);
        }
      }
      trail.pop_back();
      state[i] = 2;
    };
    for (size_t i = 0; i < config_.routes.size(); ++i) {
      if (state[i] == 0) visit(visit, i);
    }
  }

  void check_routes() {
    UniqueNames names(diag_, "route name");
    for (size_t i = 0; i < config_.routes.size(); ++i) {
      const RouteConfig& r = config_.routes[i];
      std::string path = index_path("routes", i);
      std::string name_path = child_path(path, "name");
      if (r.name.empty() && diag_.was_read(name_path)) diag_.error(name_path, "must not be empty");
      names.add(r.name, name_path);

      const bool policy_mode = r.strategy == kPolicyStrategy;
      std::string strategy_path = child_path(path, "strategy");
      const bool known = policy_mode || is_known_strategy(r.strategy);
      if (!known) {
        diag_.error(strategy_path, "unknown strategy " + quoted(r.strategy) +
                                       "; known: " + strategy_list(/*with_policy=*/true));
      }

      // A disaggregated route's own targets are its decode step's, read from [routes.decode].
      std::string targets_path =
          child_path(r.decode_table ? child_path(path, "decode") : path, "targets");
      if (r.decode_table) strategy_path = child_path(child_path(path, "decode"), "strategy");
      if (r.targets.empty() && !r.decode_table) {
        diag_.error(targets_path, "a route needs at least one [[routes.targets]]");
      }
      std::unordered_set<std::string> models;
      size_t weighted = 0;
      std::string first_unweighted;
      std::string ignored_weight_path;
      for (size_t j = 0; j < r.targets.size(); ++j) {
        const TargetConfig& t = r.targets[j];
        std::string target_path = index_path(targets_path, j);
        check_traffic_provider(t.provider, child_path(target_path, "provider"));
        if (t.model.empty() && diag_.was_read(child_path(target_path, "model"))) {
          diag_.error(child_path(target_path, "model"), "must not be empty");
        }
        models.insert(t.model);
        if (t.weight) {
          ++weighted;
          if (*t.weight != 1 && ignored_weight_path.empty()) {
            ignored_weight_path = child_path(target_path, "weight");
          }
        } else if (first_unweighted.empty()) {
          first_unweighted = target_path;
        }
      }
      if (known && !strategy_reads_weights(r.strategy) && !ignored_weight_path.empty()) {
        diag_.warning(ignored_weight_path, "strategy " + r.strategy + " ignores weights");
      }
      warn_without_telemetry(r, strategy_path);

      check_pipeline(r, path);

      std::string policy_path = child_path(path, "policy");
      if (r.policy && !policy_mode) {
        diag_.error(policy_path, "[routes.policy] applies only to strategy = \"policy\"");
      }
      if (policy_mode && weighted > 0 && weighted < r.targets.size()) {
        diag_.error(first_unweighted,
                    "a policy route with weights must set weight on every target (" +
                        std::to_string(weighted) + " of " + std::to_string(r.targets.size()) +
                        " have one)");
      }
      if (r.policy && r.policy->decision_service) {
        check_decision_service(*r.policy->decision_service,
                               child_path(policy_path, "decision_service"), models);
      }
      check_disaggregation(r, path);
    }
  }

  // SPEC §18: mode, the two steps' tables, their strategies, and the roles of their providers.
  void check_disaggregation(const RouteConfig& r, const std::string& path) {
    const std::string mode_path = child_path(path, "mode");
    if (r.mode != "aggregated" && r.mode != "disaggregated") {
      diag_.error(mode_path, "unknown mode " + quoted(r.mode) + "; expected aggregated or " +
                                 "disaggregated");
      return;
    }
    const std::string prefill_path = child_path(path, "prefill");
    const std::string decode_path = child_path(path, "decode");
    if (r.mode == "aggregated") {
      for (const auto& [given, at] : {std::pair{r.prefill.has_value(), prefill_path},
                                      std::pair{r.decode_table, decode_path}}) {
        if (given) diag_.error(at, "applies only to mode = \"disaggregated\"");
      }
      if (diag_.was_read(child_path(path, "min_uncached_tokens"))) {
        diag_.warning(child_path(path, "min_uncached_tokens"),
                      "has no effect without mode = \"disaggregated\"");
      }
      return;
    }
    if (!r.prefill) diag_.error(prefill_path, "a disaggregated route needs [routes.prefill]");
    if (!r.decode_table) diag_.error(decode_path, "a disaggregated route needs [routes.decode]");
    if (r.policy || r.strategy == kPolicyStrategy || r.strategy == strategy::kAdaptive) {
      diag_.error(child_path(decode_path, "strategy"),
                  "the decode step of a disaggregated route takes a strategy other than policy "
                  "or adaptive");
    }
    if (r.decode_table && r.targets.empty()) {
      diag_.error(child_path(decode_path, "targets"), "needs at least one target");
    }
    check_stage_roles(r.targets, child_path(decode_path, "targets"), "decode");
    if (!r.prefill) return;
    const std::string prefill_strategy = child_path(prefill_path, "strategy");
    const std::string& s = r.prefill->strategy;
    if (s == kPolicyStrategy || s == strategy::kAdaptive) {
      diag_.error(prefill_strategy, "the prefill step takes a strategy other than policy or "
                                    "adaptive");
    } else if (!s.empty() && !is_known_strategy(s)) {
      diag_.error(prefill_strategy,
                  "unknown strategy " + quoted(s) + "; known: " + strategy_list(false));
    }
    const std::string prefill_targets = child_path(prefill_path, "targets");
    if (r.prefill->targets.empty()) diag_.error(prefill_targets, "needs at least one target");
    for (size_t j = 0; j < r.prefill->targets.size(); ++j) {
      check_traffic_provider(r.prefill->targets[j].provider,
                             child_path(index_path(prefill_targets, j), "provider"));
    }
    check_stage_roles(r.prefill->targets, prefill_targets, "prefill");
  }

  // Every provider of a step serves it: role `step` or "both".
  void check_stage_roles(const std::vector<TargetConfig>& targets, const std::string& path,
                         std::string_view step) {
    for (size_t j = 0; j < targets.size(); ++j) {
      auto it = providers_.find(targets[j].provider);
      if (it == providers_.end()) continue;  // reported elsewhere
      const ProviderConfig& p = *it->second;
      const bool known_role = p.role == "prefill" || p.role == "decode" || p.role == "both";
      if (known_role && p.role != step && p.role != "both") {
        diag_.error(child_path(index_path(path, j), "provider"),
                    "provider " + quoted(p.name) + " has role " + p.role + "; the " +
                        std::string(step) + " step takes providers of role " + std::string(step) +
                        " or both");
      }
      if (p.kind != "openai" && p.kind != "decision_service") {
        diag_.error(child_path(index_path(path, j), "provider"),
                    "provider " + quoted(p.name) + " has kind " + p.kind +
                        "; prefill/decode disaggregation speaks vLLM's KV-transfer protocol, to "
                        "openai providers only");
      }
    }
  }

  void check_decision_service(const PolicyConfig::DecisionService& ds, const std::string& path,
                              const std::unordered_set<std::string>& models) {
    if (!ds.provider.empty()) {
      std::string provider_path = child_path(path, "provider");
      const ProviderConfig* p = find_provider(ds.provider, provider_path);
      if (p != nullptr && p->kind != "decision_service") {
        diag_.error(provider_path, "provider " + quoted(ds.provider) + " has kind " + p->kind +
                                       "; the decision plugin needs kind = \"decision_service\"");
      }
    }
    if (models.size() < 2) {
      diag_.warning(path, "the route's targets name " + std::to_string(models.size()) +
                              " distinct model(s): with fewer than 2 there is nothing to choose, "
                              "so the decision service is never asked");
    }
    std::string criteria_path = child_path(path, "criteria");
    for (const auto& [model, description] : ds.criteria) {
      if (models.count(model) == 0) {
        diag_.error(child_path(criteria_path, model),
                    quoted(model) + " is not the model of any target of this route");
      }
    }
  }

  void check_groups() {
    UniqueNames slugs(diag_, "group slug");
    for (size_t i = 0; i < config_.provider_groups.size(); ++i) {
      const ProviderGroupConfig& g = config_.provider_groups[i];
      std::string path = index_path("provider_groups", i);
      std::string slug_path = child_path(path, "slug");
      if (!is_group_slug(g.slug)) {
        diag_.error(slug_path,
                    "group slug " + quoted(g.slug) + " must match ^[a-z0-9][a-z0-9-]{0,62}$");
      }
      slugs.add(g.slug, slug_path);
      // "x/model" addresses a group or pins a provider: the two name spaces must not overlap.
      if (providers_.count(g.slug) != 0) {
        diag_.error(slug_path, "group slug " + quoted(g.slug) + " is also a provider name");
      }
      std::string strategy_path = child_path(path, "strategy");
      const bool known = is_known_strategy(g.strategy);
      if (g.strategy == kPolicyStrategy) {
        diag_.error(strategy_path, "policy mode is for routes; a group needs one of: " +
                                       strategy_list(/*with_policy=*/false));
      } else if (!known) {
        diag_.error(strategy_path, "unknown strategy " + quoted(g.strategy) +
                                       "; known: " + strategy_list(/*with_policy=*/false));
      }
      std::string members_path = child_path(path, "members");
      if (g.members.empty()) {
        diag_.error(members_path, "a group needs at least one [[provider_groups.members]]");
      }
      std::string ignored_weight_path;
      for (size_t j = 0; j < g.members.size(); ++j) {
        std::string member_path = index_path(members_path, j);
        check_traffic_provider(g.members[j].provider, child_path(member_path, "provider"));
        if (g.members[j].weight != 1 && ignored_weight_path.empty()) {
          ignored_weight_path = child_path(member_path, "weight");
        }
      }
      if (known && !strategy_reads_weights(g.strategy) && !ignored_weight_path.empty()) {
        diag_.warning(ignored_weight_path, "strategy " + g.strategy + " ignores weights");
      }
    }
  }

  void check_keys() {
    if (config_.keys.empty()) {
      diag_.warning("keys", "no [[keys]]: the gateway is open to anyone");
      return;
    }
    UniqueNames names(diag_, "key name");
    for (size_t i = 0; i < config_.keys.size(); ++i) {
      const KeyConfig& k = config_.keys[i];
      std::string path = index_path("keys", i);
      std::string name_path = child_path(path, "name");
      if (k.name.empty() && diag_.was_read(name_path)) diag_.error(name_path, "must not be empty");
      names.add(k.name, name_path);
      std::string env_path = child_path(path, "key_env");
      std::string sha_path = child_path(path, "key_sha256");
      bool has_env = diag_.was_read(env_path);
      bool has_sha = diag_.was_read(sha_path);
      if (has_env == has_sha) {
        diag_.error(has_env ? sha_path : path, "set exactly one of key_env or key_sha256");
      }
      if (has_env && !is_env_name(k.key_env)) {
        diag_.error(env_path, kNotAnEnvName);
      }
      if (has_sha && !is_sha256_hex(k.key_sha256)) {
        diag_.error(sha_path, "expected 64 lowercase hex characters (a SHA-256 digest)");
      }
      if (std::string salt_path = child_path(path, "key_salt"); diag_.was_read(salt_path)) {
        if (!has_sha) diag_.error(salt_path, "key_salt goes with key_sha256");
        if (!is_salt_hex(k.key_salt)) {
          diag_.error(salt_path, "expected 16 lowercase hex characters");
        }
      }
      for (size_t j = 0; j < k.routes.size(); ++j) {
        if (k.routes[j].empty()) {
          diag_.error(index_path(child_path(path, "routes"), j), "must not be empty");
        }
      }
      for (size_t j = 0; j < k.providers.size(); ++j) {
        find_provider(k.providers[j], index_path(child_path(path, "providers"), j));
      }
      if (!k.team.empty() && !team_exists(k.team)) {
        diag_.error(child_path(path, "team"), "no [[teams]] named " + quoted(k.team));
      }
      check_limit_fields(k.limits, path);
      check_route_limits(k.route_limits, path);
    }
  }

  bool team_exists(const std::string& name) const {
    return std::any_of(config_.teams.begin(), config_.teams.end(),
                       [&](const TeamConfig& t) { return t.name == name; });
  }

  void check_teams() {
    UniqueNames names(diag_, "team name");
    for (size_t i = 0; i < config_.teams.size(); ++i) {
      const TeamConfig& t = config_.teams[i];
      const std::string path = index_path("teams", i);
      const std::string name_path = child_path(path, "name");
      if (t.name.empty() && diag_.was_read(name_path)) diag_.error(name_path, "must not be empty");
      names.add(t.name, name_path);
      check_limit_fields(t.limits, path);
      check_route_limits(t.route_limits, path);
    }
  }

  // A burst means nothing without a rate; a budget of 0 refuses everything, which is allowed
  // (a frozen key) but worth a word.
  void check_limit_fields(const LimitSpec& limits, const std::string& path) {
    if (limits.burst != 0 && limits.rpm == 0) {
      diag_.error(child_path(path, "burst"), "burst goes with rpm");
    }
    if (limits.budget && limits.budget->usd == 0) {
      diag_.warning(child_path(child_path(path, "budget"), "usd"),
                    "a budget of 0 refuses every request");
    }
  }

  void check_route_limits(const std::vector<RouteLimitConfig>& limits, const std::string& path) {
    for (size_t j = 0; j < limits.size(); ++j) {
      const std::string at = index_path(child_path(path, "route_limits"), j);
      if (limits[j].route.empty() && diag_.was_read(child_path(at, "route"))) {
        diag_.error(child_path(at, "route"), "must not be empty");
      }
      if (limits[j].limits.empty()) {
        diag_.warning(at, "sets no limit (rpm, tpm, max_in_flight or budget)");
      }
      check_limit_fields(limits[j].limits, at);
    }
  }

  void check_limits_backend() {
    const LimitsConfig& l = config_.limits;
    if (l.backend != "local" && l.backend != "redis") {
      diag_.error("limits.backend", "must be \"local\" or \"redis\", got " + quoted(l.backend));
    }
    if (l.on_backend_error != "open" && l.on_backend_error != "closed") {
      diag_.error("limits.on_backend_error",
                  "must be \"open\" or \"closed\", got " + quoted(l.on_backend_error));
    }
    if (l.backend == "redis" && l.redis_url.empty()) {
      diag_.error("limits.redis_url", "backend = \"redis\" needs a redis_url");
    }
    check_limits_redis_address(l);
    if (!l.redis_password_env.empty() && !l.redis_password_file.empty()) {
      diag_.error("limits.redis_password_file",
                  "set redis_password_env or redis_password_file, not both");
    } else if (!l.redis_password_env.empty()) {
      if (!is_env_name(l.redis_password_env)) {
        diag_.error("limits.redis_password_env", kNotAnEnvName);
      } else if (local_secrets_) {
        const char* value = std::getenv(l.redis_password_env.c_str());
        if (value == nullptr || *value == '\0') {
          diag_.error("limits.redis_password_env",
                      "environment variable " + l.redis_password_env + " is not set or empty");
        }
      }
    } else if (!l.redis_password_file.empty() && local_secrets_) {
      if (auto secret = read_secret_file(l.redis_password_file); !secret) {
        diag_.error("limits.redis_password_file", secret.error());
      }
    }
  }

  void check_limits_redis_address(const LimitsConfig& l) {
    bool tls = false;
    if (!l.redis_url.empty()) {
      auto address = parse_redis_url(l.redis_url);
      if (!address) {
        diag_.error("limits.redis_url", address.error());
      } else {
        tls = address->tls;
      }
    }
    if (l.redis_ca_file.empty()) return;
    if (!tls && !l.redis_url.empty()) {
      diag_.error("limits.redis_ca_file", "applies to a rediss:// redis_url only");
    }
    // Read when the gateway runs where the file is: another machine's paths cannot be checked.
    check_readable_file(l.redis_ca_file, local_secrets_, "limits.redis_ca_file");
  }

  // An OTLP/HTTP endpoint the exporter can post to: http:// or https://, a host and a port.
  void check_tracing() {
    const std::string& endpoint = config_.tracing.otlp_endpoint;
    if (endpoint.empty()) {
      if (diag_.was_read("tracing.otlp_endpoint")) {
        diag_.error("tracing.otlp_endpoint", "must not be empty (leave it out for no export)");
      }
      return;
    }
    if (auto url = parse_url(endpoint); !url) {
      diag_.error("tracing.otlp_endpoint", "bad URL " + quoted_url(endpoint) + ": " + url.error() +
                                               "; expected http://host:port/v1/traces");
    }
  }

  const Config& config_;
  Diagnostics& diag_;
  const bool local_secrets_;
  std::unordered_map<std::string, const ProviderConfig*> providers_;
};

}  // namespace

void validate_config(const Config& config, Diagnostics& diag, bool local_secrets) {
  Validator(config, diag, local_secrets).run();
}

}  // namespace rolter::config_internal
