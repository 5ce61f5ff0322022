// rolter: the gateway's command line (SPEC §1).
//
//   rolter serve --config rolter.toml   all-in-one data plane
//     [--control-plane URL --node-id ID]  report adaptive-routing telemetry there (SPEC §6.10),
//                                         with the node token from ROLTER_NODE_TOKEN
//   rolter check --config rolter.toml   validate a config; exit 1 on error
//   rolter policy-thresholds            when policy mode moves a session off a busy engine
#include <sys/resource.h>
#include <unistd.h>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>

#include "app/config_source.h"
#include "app/policy_thresholds.h"
#include "balance/balancer_factory.h"
#include "config/loader.h"
#include "config/url.h"
#include "fleet/adaptive_telemetry/adaptive_telemetry.h"
#include "fleet/engine_metrics/engine_scraper.h"
#include "fleet/kv_events/kv_event_service.h"
#include "fleet/lmcache/lmcache_poller.h"
#include "health/health_checker.h"
#include "proxy/request_log.h"
#include "server/server.h"
#include "tls/server_context.h"

namespace rolter {
namespace {

namespace asio = boost::asio;

int run_check(const std::string& path) {
  auto loaded = load_config_file(path);
  if (!loaded) {
    for (const auto& error : loaded.error()) std::cerr << error.to_string() << "\n";
    std::cerr << path << ": " << loaded.error().size() << " error(s)\n";
    return 1;
  }
  for (const auto& warning : loaded->warnings) {
    std::cerr << "warning: " << warning.to_string() << "\n";
  }
  // The files are readable (the validator saw to that); whether they are a certificate and its
  // key only OpenSSL can say.
  if (const TlsConfig& tls = loaded->config.tls; !tls.cert.empty()) {
    if (auto context = make_server_context(tls.cert, tls.key); !context) {
      std::cerr << path << ": tls: " << context.error() << "\n";
      return 1;
    }
  }
  std::cout << path << ": OK (" << loaded->config.providers.size() << " providers, "
            << loaded->config.routes.size() << " routes, " << loaded->config.provider_groups.size()
            << " provider groups, " << loaded->config.keys.size() << " keys)\n";
  return 0;
}

// Raises the soft limit on open files to the hard limit: every client and upstream connection is
// a descriptor, and the soft default (often 1024) caps a gateway far below what the host allows.
void raise_file_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
  const rlim_t before = limit.rlim_cur;
  limit.rlim_cur = limit.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &limit) == 0) {
    spdlog::info("open file limit raised from {} to {}", before, limit.rlim_max);
  }
}

// What `rolter serve` reports to a control plane (SPEC §10).
struct NodeOptions {
  std::string control_plane;  // empty = report nowhere
  std::string node_id;        // empty = the host name
};

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "rolter";
  return name;
}

int run_serve(const std::string& path, const std::string& listen_override,
              unsigned workers_override, const NodeOptions& node) {
  raise_file_limit();
  SnapshotStore store;
  LoadTracker tracker;
  Metrics metrics;
  ConfigSource source(path, store, tracker, BalancerDeps{}, &metrics);
  if (auto problems = source.reload(); !problems.empty()) {
    for (const auto& p : problems) spdlog::error("{}", p);
    spdlog::error("{}: not starting: {} error(s)", path, problems.size());
    return 1;
  }
  const auto& config = store.current()->config();
  const std::string listen = listen_override.empty() ? config.server.listen : listen_override;
  auto address = parse_host_port(listen, /*allow_port_zero=*/true);
  if (!address) {
    spdlog::error("listen address '{}': {}", listen, address.error());
    return 1;
  }
  const unsigned workers = workers_override > 0 ? workers_override : config.server.workers;
  Server server(store, workers);
  server.state().metrics = &metrics;
  server.state().tracker = &tracker;
  auto port = server.listen(address->host, address->port);
  if (!port) {
    spdlog::error("{}", port.error());
    return 1;
  }
  const bool tls = !config.tls.cert.empty();
  if (tls) {
    if (auto used = server.use_tls(config.tls.cert, config.tls.key); !used) {
      spdlog::error("tls: {}", used.error());
      return 1;
    }
  }
  if (const auto& metrics_listen = config.server.metrics_listen; !metrics_listen.empty()) {
    auto metrics_address = parse_host_port(metrics_listen, /*allow_port_zero=*/true);
    auto metrics_port = metrics_address
                            ? server.listen_metrics(metrics_address->host, metrics_address->port)
                            : tl::unexpected(metrics_address.error());
    if (!metrics_port) {
      spdlog::error("server.metrics_listen: {}", metrics_port.error());
      return 1;
    }
    spdlog::info("metrics listening on http://{}:{} (/metrics, /healthz, /readyz)",
                 metrics_address->host, *metrics_port);
  }
  server.start();
  HealthChecker health(store);
  health.start();
  EngineScraper engine_metrics(store);
  engine_metrics.start();
  KvEventService kv_events(store);
  kv_events.start();
  LmcachePoller lmcache(store);
  lmcache.start();
  const char* node_token = std::getenv("ROLTER_NODE_TOKEN");
  AdaptiveTelemetry adaptive_telemetry(
      store, {.control_plane = node.control_plane,
              .node_id = node.node_id.empty() ? host_name() : node.node_id,
              .node_token = node_token != nullptr ? node_token : ""});
  adaptive_telemetry.start();
  if (!node.control_plane.empty()) {
    spdlog::info("adaptive telemetry: reporting to {} every 15 s", node.control_plane);
  }
  const std::string shown_host =
      address->host.find(':') != std::string::npos ? "[" + address->host + "]" : address->host;
  spdlog::info("rolter listening on {}://{}:{} ({} routes, config version {})",
               tls ? "https" : "http", shown_host, *port, config.routes.size(), source.version());

  // The main thread is the control thread: signals, config reloads, drain.
  asio::io_context control;
  asio::signal_set reload_signal(control, SIGHUP);
  asio::signal_set stop_signals(control, SIGTERM, SIGINT);
  auto reload = [&](const char* why) {
    auto problems = source.reload();
    if (problems.empty()) {
      spdlog::info("config reloaded ({}): version {}, {} routes", why, source.version(),
                   store.current()->config().routes.size());
      return;
    }
    for (const auto& p : problems) spdlog::error("config reload failed: {}", p);
    spdlog::error("config reload failed ({}): {} error(s); still serving version {}", why,
                  problems.size(), source.version());
  };
  std::function<void()> wait_hup = [&] {
    reload_signal.async_wait([&](const boost::system::error_code& ec, int) {
      if (ec) return;
      reload("SIGHUP");
      wait_hup();
    });
  };
  wait_hup();

  // Poll the file: portable, and cheap at one stat() a second.
  asio::steady_timer watch(control);
  std::function<void()> wait_watch = [&] {
    watch.expires_after(std::chrono::milliseconds(500));
    watch.async_wait([&](const boost::system::error_code& ec) {
      if (ec) return;
      if (source.file_changed()) reload("file changed");
      wait_watch();
    });
  };
  wait_watch();

  stop_signals.async_wait([&](const boost::system::error_code& ec, int signal) {
    if (ec) return;
    spdlog::info("{}: draining (up to {} ms)", signal == SIGTERM ? "SIGTERM" : "SIGINT",
                 store.current()->config().server.drain_timeout_ms);
    reload_signal.cancel();
    watch.cancel();
    const auto left =
        server.drain(std::chrono::milliseconds(store.current()->config().server.drain_timeout_ms));
    if (left > 0) spdlog::warn("drain timeout: {} request(s) cut", left);
    health.stop();
    engine_metrics.stop();
    kv_events.stop();
    lmcache.stop();
    adaptive_telemetry.stop();
    server.stop();
    spdlog::info("stopped");
  });
  control.run();
  return 0;
}

}  // namespace
}  // namespace rolter

int main(int argc, char** argv) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("rolter"));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");

  CLI::App app{
      "rolter: an OpenAI-compatible LLM gateway that routes each request to the engine "
      "instance best placed to serve it."};
  app.require_subcommand(1);

  std::string config_path = "rolter.toml";
  std::string listen;
  unsigned workers = 0;
  auto* serve = app.add_subcommand("serve", "Run the gateway (data plane) on the configured port.");
  serve->add_option("-c,--config", config_path, "Path to rolter.toml")->capture_default_str();
  serve->add_option("--listen", listen, "Override server.listen, e.g. 127.0.0.1:0");
  serve->add_option("--workers", workers, "Override server.workers (0 = one per core)");
  bool no_access_log = false;
  serve->add_flag("--no-access-log", no_access_log,
                  "Do not write the JSON line per request (like nginx's access_log off); "
                  "everything else is still logged");
  rolter::NodeOptions node;
  serve->add_option("--control-plane", node.control_plane,
                    "The control plane this node reports to, e.g. http://cp.internal:4100 "
                    "(node token from ROLTER_NODE_TOKEN); none = report nowhere");
  serve->add_option("--node-id", node.node_id,
                    "This node's id in its reports (x-rolter-node-id); default: the host name");

  auto* check = app.add_subcommand("check",
                                   "Validate a config: print every error with file, "
                                   "line and key; exit 1 on error.");
  check->add_option("-c,--config", config_path, "Path to rolter.toml")->capture_default_str();

  std::string threshold_targets = "2..8";
  std::string threshold_ratios = "1:1,1.5:1,2:1";
  bool threshold_json = false;
  auto* thresholds = app.add_subcommand(
      "policy-thresholds",
      "Print, for policy mode with least_inflight and session_affinity, how many "
      "requests a session's engine must have in flight, every other target idle, before the "
      "session's next request moves to another target.\n"
      "One row per target count, one column per least_inflight:session_affinity weight ratio. A "
      "cell is that in-flight count, or 'never' when the session stays up to 1000 in flight. "
      "'N (tie at K)' means that at K in flight the engine ties an idle target exactly, so the "
      "pick is a coin flip, and from N the session moves. Computed by the balancer's own code on "
      "synthetic loads; docs/policy-mode.md explains how to read it.");
  thresholds
      ->add_option("--targets", threshold_targets,
                   "Target counts: a range such as 2..8, or one count")
      ->capture_default_str();
  thresholds
      ->add_option("--ratios", threshold_ratios,
                   "Comma-separated least_inflight:session_affinity weight ratios")
      ->capture_default_str();
  thresholds->add_flag("--json", threshold_json,
                       "Print JSON: one object per cell with targets, ratio, both weights, flip "
                       "and tie_at (null = never / no tie)");

  CLI11_PARSE(app, argc, argv);
  if (*check) return rolter::run_check(config_path);
  if (*thresholds) {
    return rolter::run_policy_thresholds(threshold_targets, threshold_ratios, threshold_json);
  }
  rolter::set_access_log(!no_access_log);
  return rolter::run_serve(config_path, listen, workers, node);
}
