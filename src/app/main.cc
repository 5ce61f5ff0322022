// rolter: the gateway's command line (SPEC §1).
//
//   rolter serve --config rolter.toml   all-in-one: data plane + admin API on one port
//   rolter control-plane                the admin API, store and snapshot publisher alone
//   rolter gateway --control-plane URL  a data-plane node that follows a control plane
//   rolter check --config rolter.toml   validate a config; exit 1 on error
//   rolter policy-thresholds            when policy mode moves a session off a busy engine
//   rolter version, rolter --version    version, commit and build type
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdlib>
#include <iostream>

#include "app/build_info.h"
#include "app/commands.h"
#include "app/provider_calls.h"
#include "balance/policy/policy_thresholds.h"
#include "config/loader.h"
#include "proxy/request_log.h"
#include "tls/server_context.h"

namespace rolter {
namespace {

int run_check(const std::string& path) {
  auto loaded = load_config_file(path, {.local_secrets = true});
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
  for (const auto& line : describe_provider_calls(loaded->config))
    std::cout << "  " << line << "\n";
  return 0;
}

}  // namespace
}  // namespace rolter

int main(int argc, char** argv) {
  // SIGUSR1 reopens the access log once the server runs (run_until_signal); until then, a
  // rotation's signal must not end the process, as its default action would.
  std::signal(SIGUSR1, SIG_IGN);
  spdlog::set_default_logger(spdlog::stderr_color_mt("rolter"));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");

  CLI::App app{
      "rolter: an OpenAI-compatible LLM gateway that routes each request to the engine "
      "instance best placed to serve it."};
  app.require_subcommand(1);
  const std::string version = rolter::version_text(rolter::build_info());
  app.set_version_flag("--version", version, "Print the version, commit and build type, and exit");

  std::string config_path = "rolter.toml";
  rolter::ServeOptions serve_options;
  auto* serve = app.add_subcommand(
      "serve",
      "Run the gateway on the configured port: the data plane and the admin API (/api/v1), with "
      "its store beside the config (rolter.db) unless [store] url says otherwise.");
  serve->add_option("-c,--config", config_path, "Path to rolter.toml")->capture_default_str();
  serve->add_option("--listen", serve_options.listen, "Override server.listen, e.g. 127.0.0.1:0");
  serve->add_option("--workers", serve_options.workers,
                    "Override server.workers (0 = one per core)");
  bool no_access_log = false;
  serve->add_flag("--no-access-log", no_access_log,
                  "Do not write the JSON line per request (like nginx's access_log off); "
                  "everything else is still logged");
  serve->add_option("--control-plane", serve_options.telemetry.control_plane,
                    "The control plane this node reports to, e.g. http://cp.internal:4100 "
                    "(node token from ROLTER_NODE_TOKEN); none = report nowhere");
  serve->add_option("--node-id", serve_options.telemetry.node_id,
                    "This node's id in its reports (x-rolter-node-id); default: the host name");

  rolter::ControlPlaneOptions cp_options;
  auto* control_plane = app.add_subcommand(
      "control-plane",
      "Run the control plane alone: the admin API (/api/v1), the store and the snapshot that "
      "gateways follow (/internal/snapshot). The admin token is ROLTER_ADMIN_TOKEN; gateways "
      "authenticate with ROLTER_NODE_TOKEN.");
  control_plane->add_option("-c,--config", cp_options.config_path,
                            "rolter.toml whose providers and routes are served read-only; "
                            "optional with both --store and --listen");
  control_plane->add_option("--store", cp_options.store_url,
                            "Override [store] url: sqlite:PATH or postgres://user@host/db");
  control_plane->add_option("--listen", cp_options.listen,
                            "Override server.listen, e.g. 0.0.0.0:4100");
  control_plane->add_option("--workers", cp_options.workers, "Worker threads (0 = one per core)");
  control_plane
      ->add_option("--tls-cert", cp_options.tls.cert,
                   "Serve HTTPS with this PEM certificate chain (overrides [tls])")
      ->check(CLI::ExistingFile);
  control_plane->add_option("--tls-key", cp_options.tls.key, "The certificate's PEM private key")
      ->check(CLI::ExistingFile);

  rolter::GatewayOptions gw_options;
  auto* gateway = app.add_subcommand(
      "gateway",
      "Run a data-plane node that serves what a control plane publishes (long poll of "
      "/internal/snapshot, node token from ROLTER_NODE_TOKEN). It keeps the last snapshot in "
      "--state-dir, so it starts and serves while the control plane is down.");
  gateway
      ->add_option("--control-plane", gw_options.control_plane,
                   "The control plane's URL, e.g. http://cp.internal:4100")
      ->required();
  gateway->add_option("--listen", gw_options.listen, "HOST:PORT to serve on, e.g. 0.0.0.0:4000")
      ->required();
  gateway->add_option("--node-id", gw_options.node_id,
                      "This node's id at the control plane; default: the host name");
  gateway->add_option("--state-dir", gw_options.state_dir,
                      "Where the last snapshot is kept (created, mode 0700); none = not kept");
  gateway->add_option("--workers", gw_options.workers, "Worker threads (0 = one per core)");
  gateway
      ->add_option("--tls-cert", gw_options.tls.cert, "Serve HTTPS with this PEM certificate chain")
      ->check(CLI::ExistingFile);
  gateway->add_option("--tls-key", gw_options.tls.key, "The certificate's PEM private key")
      ->check(CLI::ExistingFile);
  gateway->add_flag("--no-access-log", no_access_log, "Do not write the JSON line per request");

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

  auto* version_command =
      app.add_subcommand("version", "Print the version, commit and build type (as --version).");

  CLI11_PARSE(app, argc, argv);
  if (*version_command) {
    std::cout << version << "\n";
    return 0;
  }
  if (*check) return rolter::run_check(config_path);
  if (*thresholds) {
    return rolter::run_policy_thresholds(threshold_targets, threshold_ratios, threshold_json);
  }
  rolter::set_access_log(!no_access_log);
  for (const auto* tls : {&cp_options.tls, &gw_options.tls}) {
    if (tls->cert.empty() != tls->key.empty()) {
      std::cerr << "--tls-cert and --tls-key go together\n";
      return 1;
    }
  }
  if (*control_plane) return rolter::run_control_plane(cp_options);
  if (*gateway) return rolter::run_gateway(gw_options);
  serve_options.config_path = config_path;
  serve_options.telemetry.node_token = rolter::env_value("ROLTER_NODE_TOKEN");
  return rolter::run_serve(serve_options);
}
