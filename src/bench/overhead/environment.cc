#include "bench/overhead/environment.h"

#include <filesystem>

#include "bench/overhead/launchers.h"
#include "bench/overhead/proc_stats.h"
#include "config/url.h"

namespace rolter::bench::overhead {
namespace {

std::optional<double> rss_mb(const std::vector<pid_t>& pids) {
  auto m = read_memory(pids);
  if (!m) return std::nullopt;
  return static_cast<double>(m->rss_kb) / 1024.0;
}

}  // namespace

tl::expected<std::unique_ptr<Environment>, std::string> Environment::start(
    const OverheadOptions& o, std::vector<PeerSpec> peers, const std::string& rolter_path,
    const std::string& nginx_path, const std::string& haproxy_path) {
  std::unique_ptr<Environment> env(new Environment());
  auto dir = make_private_dir("rolter-bench-overhead");
  if (!dir) return tl::unexpected(dir.error());
  env->dir_ = *dir;
  if (auto up = env->start_upstream(o, nginx_path); !up) return tl::unexpected(up.error());
  substitute_upstream(peers, env->upstream_url_);

  auto direct = make_target("direct", env->upstream_url_);
  if (!direct) return tl::unexpected(direct.error());
  PathUnderTest d;
  d.target = *direct;
  d.result.name = "direct";
  d.result.kind = "direct";
  d.result.url = env->upstream_url_;
  d.result.workers = "-";
  d.result.measured_process = "the upstream";
  d.result.pids = env->upstream_pids_;
  d.result.idle_rss_mb = rss_mb(d.result.pids);
  env->paths_.push_back(std::move(d));

  if (!rolter_path.empty()) {
    auto rolter = start_rolter(rolter_path, env->dir_, env->upstream_url_, o.workers);
    if (!rolter) return tl::unexpected(rolter.error());
    env->rolter_access_log_off_ = rolter->access_log_off;
    auto added = env->add_owned("rolter", "rolter", std::move(*rolter), std::to_string(o.workers));
    if (!added) return tl::unexpected(added.error());
  }
  for (const std::string& backend : o.limits) {
    if (rolter_path.empty()) break;
    if (auto added = env->add_limited_rolter(o, rolter_path, backend); !added) {
      return tl::unexpected(added.error());
    }
  }
  if (o.tracing_dead_collector && !rolter_path.empty()) {
    if (auto added = env->add_traced_rolter(o, rolter_path); !added) {
      return tl::unexpected(added.error());
    }
  }
  if (o.tracing_live_collector && !rolter_path.empty()) {
    if (!o.upstream_url.empty()) {
      return tl::unexpected(std::string(
          "--tracing-live-collector needs the canned upstream (its /v1/traces takes the "
          "batches), not --upstream"));
    }
    if (auto added = env->add_live_traced_rolter(o, rolter_path); !added) {
      return tl::unexpected(added.error());
    }
  }
  if (o.flow_control && !rolter_path.empty()) {
    if (auto added = env->add_flow_controlled_rolter(o, rolter_path); !added) {
      return tl::unexpected(added.error());
    }
  }
  if (!nginx_path.empty() && !o.no_nginx) {
    const uint16_t upstream_port = env->paths_.front().target.port;
    auto proxy = start_nginx(nginx_path, "nginx", env->dir_, o.workers, [&](const NginxCommon& c) {
      return proxy_nginx_conf(c, upstream_port);
    });
    if (!proxy) return tl::unexpected(proxy.error());
    auto added = env->add_owned("nginx", "nginx", std::move(*proxy), std::to_string(o.workers));
    if (!added) return tl::unexpected(added.error());
  }
  if (!haproxy_path.empty()) {
    const uint16_t upstream_port = env->paths_.front().target.port;
    auto proxy = start_haproxy(haproxy_path, env->dir_, o.workers, upstream_port);
    if (!proxy) return tl::unexpected(proxy.error());
    auto added = env->add_owned("haproxy", "haproxy", std::move(*proxy), std::to_string(o.workers));
    if (!added) return tl::unexpected(added.error());
  }
  for (const PeerSpec& p : peers) {
    if (auto added = env->add_peer(p); !added) return tl::unexpected(added.error());
  }
  return env;
}

tl::expected<void, std::string> Environment::start_upstream(const OverheadOptions& o,
                                                            const std::string& nginx_path) {
  if (!o.upstream_url.empty()) {
    auto url = parse_url(o.upstream_url);
    if (!url || url->tls()) {
      return tl::unexpected("--upstream " + o.upstream_url + ": " +
                            (url ? std::string("only http:// URLs") : url.error()));
    }
    upstream_url_ = url->to_string();
    upstream_description_ = upstream_url_ + " (given)";
    if (auto pid = find_listener_pid(url->port)) upstream_pids_ = {*pid};
    return {};
  }
  if (nginx_path.empty()) {
    return tl::unexpected(std::string(
        "nginx was not found: it serves the canned upstream; install nginx (or nginx-light), "
        "give --nginx PATH, or point --upstream at an existing upstream"));
  }
  auto up =
      start_nginx(nginx_path, "upstream", dir_, o.upstream_workers,
                  [&](const NginxCommon& c) { return upstream_nginx_conf(c, o.stream_chunks); });
  if (!up) return tl::unexpected(up.error());
  upstream_url_ = up->url;
  upstream_pids_ = up->pids;
  upstream_description_ = "nginx `return 200` (canned answers), " +
                          std::to_string(o.upstream_workers) + " worker(s), " + upstream_url_;
  processes_.push_back(std::move(up->process));
  return {};
}

tl::expected<void, std::string> Environment::add_owned(const std::string& name,
                                                       const std::string& kind, Launched launched,
                                                       const std::string& workers) {
  auto target = make_target(name, launched.url);
  if (!target) return tl::unexpected(target.error());
  PathUnderTest p;
  p.target = *target;
  p.owned = launched.process.get();
  p.result.name = name;
  p.result.kind = kind;
  p.result.url = launched.url;
  p.result.workers = workers;
  p.result.measured_process = name;
  p.result.pids = launched.pids;
  p.result.idle_rss_mb = rss_mb(p.result.pids);
  processes_.push_back(std::move(launched.process));
  paths_.push_back(std::move(p));
  return {};
}

tl::expected<void, std::string> Environment::add_limited_rolter(const OverheadOptions& o,
                                                                const std::string& rolter_path,
                                                                const std::string& backend) {
  std::string socket;
  if (backend == "redis") {
    auto redis = start_redis(dir_, socket);
    if (!redis) return tl::unexpected(redis.error());
    processes_.push_back(std::move(redis->process));
  }
  const std::string name = "rolter-limits-" + backend;
  auto rolter =
      start_rolter(rolter_path, dir_, upstream_url_, o.workers, name, limited_key_toml(socket));
  if (!rolter) return tl::unexpected(rolter.error());
  auto added = add_owned(name, "rolter", std::move(*rolter), std::to_string(o.workers));
  if (!added) return added;
  paths_.back().target.headers.emplace_back("Authorization", std::string("Bearer ") + kLimitedKey);
  return {};
}

tl::expected<void, std::string> Environment::add_live_traced_rolter(
    const OverheadOptions& o, const std::string& rolter_path) {
  const std::string name = "rolter-tracing-live";
  auto rolter = start_rolter(rolter_path, dir_, upstream_url_, o.workers, name,
                             tracing_toml(upstream_url_ + "/v1/traces"));
  if (!rolter) return tl::unexpected(rolter.error());
  return add_owned(name, "rolter", std::move(*rolter), std::to_string(o.workers));
}

tl::expected<void, std::string> Environment::add_flow_controlled_rolter(
    const OverheadOptions& o, const std::string& rolter_path) {
  const std::string name = "rolter-flow-control";
  auto rolter = start_rolter(rolter_path, dir_, upstream_url_, o.workers, name, "",
                             flow_control_provider_fields());
  if (!rolter) return tl::unexpected(rolter.error());
  return add_owned(name, "rolter", std::move(*rolter), std::to_string(o.workers));
}

tl::expected<void, std::string> Environment::add_traced_rolter(const OverheadOptions& o,
                                                               const std::string& rolter_path) {
  // A port that was free a moment ago: nothing listens there, so every export is refused.
  auto port = free_port();
  if (!port) return tl::unexpected(port.error());
  const std::string name = "rolter-tracing-dead";
  const std::string endpoint = "http://127.0.0.1:" + std::to_string(*port) + "/v1/traces";
  auto rolter = start_rolter(rolter_path, dir_, upstream_url_, o.workers, name,
                             tracing_toml(endpoint));
  if (!rolter) return tl::unexpected(rolter.error());
  return add_owned(name, "rolter", std::move(*rolter), std::to_string(o.workers));
}

tl::expected<void, std::string> Environment::add_peer(const PeerSpec& peer) {
  auto target = make_target(peer.name, peer.url, peer.headers);
  if (!target) return tl::unexpected(target.error());
  PathUnderTest p;
  p.target = *target;
  p.result.name = peer.name;
  p.result.kind = "peer";
  p.result.url = peer.url;
  p.result.workers = "as started";
  if (auto pid = find_listener_pid(target->port)) {
    p.result.pids = {*pid};
    p.result.measured_process = peer.name + " (pid " + std::to_string(*pid) + ")";
    p.result.idle_rss_mb = rss_mb(p.result.pids);
  } else {
    p.result.measured_process = "n/a (its process is not visible in /proc)";
  }
  paths_.push_back(std::move(p));
  return {};
}

Environment::~Environment() {
  for (auto it = processes_.rbegin(); it != processes_.rend(); ++it) (*it)->stop();
  processes_.clear();
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

}  // namespace rolter::bench::overhead
