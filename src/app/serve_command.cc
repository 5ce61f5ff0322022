// rolter serve and rolter control-plane: a control plane over the config file and the store, with
// the data plane in the same process (serve) or a listener for the API alone (control-plane).
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "app/build_info.h"
#include "app/commands.h"
#include "app/snapshot_publisher.h"
#include "collect/follow/node_stats.h"
#include "config/loader.h"
#include "control/admin_api.h"
#include "control/control_plane.h"
#include "observe/metrics.h"
#include "store/store.h"
#include "store/store_url.h"

namespace rolter {
namespace {

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A SQLite store's relative path is read against the config's folder; other URLs are unchanged.
// An empty URL is the embedded default, rolter.db beside the config.
std::string resolve_store_url(const std::string& url, const std::string& config_path) {
  const std::filesystem::path dir = config_path.empty()
                                        ? std::filesystem::current_path()
                                        : std::filesystem::absolute(config_path).parent_path();
  if (url.empty()) return "sqlite:" + (dir / "rolter.db").string();
  auto parsed = parse_store_url(url);
  if (!parsed || parsed->backend != StoreBackend::kSqlite || parsed->target == ":memory:" ||
      parsed->target.front() == '/') {
    return url;  // a bad URL is reported by Store::open
  }
  return "sqlite:" + (dir / parsed->target).string();
}

struct ControlSetup {
  std::unique_ptr<Store> store;
  std::unique_ptr<ControlPlane> control;
};

// Opens the store and starts the control plane. `explicit_store`: a store the operator named
// must open; the embedded default may fail (a read-only folder), leaving the API read-only.
bool set_up_control(const std::string& config_path, const std::string& store_url,
                    bool explicit_store, ControlPlane::Prepare prepare, ControlSetup& out) {
  const std::string url = resolve_store_url(store_url, config_path);
  auto opened = Store::open(url);
  if (opened) {
    out.store = std::move(*opened);
    spdlog::info("store: {} ({}, schema {})", redact_password(url), out.store->backend(),
                 out.store->schema_version());
  } else if (explicit_store) {
    spdlog::error("store {}: {}", redact_password(url), opened.error());
    return false;
  } else {
    spdlog::warn("store {}: {}; the admin API is read-only", redact_password(url), opened.error());
  }
  const std::string admin_token = env_value("ROLTER_ADMIN_TOKEN");
  const std::string node_token = env_value("ROLTER_NODE_TOKEN");
  if (admin_token.empty()) {
    spdlog::warn("ROLTER_ADMIN_TOKEN is not set: only admin tokens made earlier open /api/v1");
  }
  out.control = std::make_unique<ControlPlane>(ControlPlane::Options{
      .config_path = config_path,
      .store = out.store.get(),
      .admin_token = admin_token,
      .node_token = node_token,
      .prepare = std::move(prepare),
      .now_ms = wall_ms,
  });
  auto problems = out.control->start();
  if (!problems.empty()) {
    for (const auto& p : problems) spdlog::error("{}", p);
    spdlog::error("{}: not starting: {} error(s)",
                  config_path.empty() ? "control plane" : config_path, problems.size());
    return false;
  }
  return true;
}

// Reloads the config file into the control plane, logging as a file reload always has.
void reload_file(ControlPlane& control, Metrics& metrics, const char* why) {
  auto problems = control.reload_file();
  if (problems.empty()) {
    spdlog::info("config reloaded ({}): version {}", why, control.version());
    return;
  }
  metrics.config_reload(false, control.version());
  for (const auto& p : problems) spdlog::error("config reload failed: {}", p);
  spdlog::error("config reload failed ({}): {} error(s); still serving version {}", why,
                problems.size(), control.version());
}

// Serves until SIGTERM or SIGINT, reloading the config file on SIGHUP or when it changes, then
// wakes the long polls and drains.
int serve_until_signal(ControlPlane& control, Metrics& metrics, DataPlane& data_plane,
                       SnapshotStore& snapshots, NodeStatsReporter* stats = nullptr) {
  return run_until_signal({
      .reload =
          [&](const char* why) {
            if (control.has_config_file()) reload_file(control, metrics, why);
          },
      .tick =
          [&] {
            if (control.file_changed()) reload_file(control, metrics, "file changed");
          },
      .begin_drain = [&] { data_plane.begin_drain(); },
      .stop =
          [&] {
            control.shutdown();
            if (stats != nullptr) stats->stop();
            data_plane.stop(std::chrono::milliseconds(
                snapshots.current()->config().server.drain_timeout_ms));
          },
  });
}

}  // namespace

int run_serve(const ServeOptions& options) {
  // The file alone first: its own errors, with file and line, and the [store] it names.
  auto loaded = load_config_file(options.config_path, {.local_secrets = true});
  if (!loaded) {
    for (const auto& e : loaded.error()) spdlog::error("{}", e.to_string());
    spdlog::error("{}: not starting: {} error(s)", options.config_path, loaded.error().size());
    return 1;
  }
  SnapshotStore snapshots;
  LoadTracker tracker;
  // One set of counter cells per worker (observe/worker_cells.h), as many as will start.
  Metrics metrics(options.workers > 0 ? options.workers : loaded->config.server.workers);
  metrics.set_build_info(build_info().version, build_info().commit, build_info().build_type);
  DiscoveredInstances discovered;
  SnapshotPublisher publisher(snapshots, tracker, &metrics, options.config_path, &discovered);
  ControlSetup setup;
  if (!set_up_control(
          options.config_path, loaded->config.store.url, !loaded->config.store.url.empty(),
          [&](const std::string& text, uint64_t version) {
            return publisher.prepare(text, version);
          },
          setup)) {
    return 1;
  }
  ControlPlane& control = *setup.control;
  AdminApi api(control, &metrics, env_value("ROLTER_UI_DIR"));
  DataPlane data_plane(snapshots, tracker, metrics);
  if (auto listening = data_plane.listen(options.listen, options.workers, &api, loaded->config.tls);
      !listening) {
    spdlog::error("{}", listening.error());
    return 1;
  }
  // The dashboard shows this node like any other: unless its reports go to another control
  // plane, they are handed to this one directly.
  TelemetryTarget telemetry = options.telemetry;
  const std::string node_id = telemetry.node_id.empty() ? host_name() : telemetry.node_id;
  auto deliver_to = [&](bool stats) {
    return [&api, &control, stats](const std::string& node, const std::string& body) {
      auto document = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
      api.touch_node(node, ROLTER_VERSION, control.version());
      if (stats) return api.ingest_node_stats(node, document).has_value();
      return api.ingest_adaptive_telemetry(node, document).has_value();
    };
  };
  std::unique_ptr<NodeStatsReporter> stats;
  if (telemetry.control_plane.empty()) {
    telemetry.node_id = node_id;
    telemetry.deliver = deliver_to(false);
    stats = std::make_unique<NodeStatsReporter>(
        metrics,
        NodeStatsReporter::Options{.node_id = node_id,
                                   .node_version = ROLTER_VERSION,
                                   .tracker = &tracker,
                                   .deliver = deliver_to(true)},
        [&control] { return control.version(); });
  }
  if (telemetry.control_plane.empty()) {
    telemetry.store_usage = [&api](std::vector<UsageRow>&& rows) {
      return api.ingest_usage(rows).has_value();
    };
  }
  data_plane.start(/*services=*/true, telemetry,
                   {.found = &discovered, .changed = [&] { publisher.refresh_discovered(); }});
  if (stats) stats->start();
  spdlog::info(
      "rolter listening on {} ({} routes, config version {}; admin API at /api/v1, dashboard at "
      "{}/ui/)",
      data_plane.url(), snapshots.current()->config().routes.size(), control.version(),
      data_plane.url());
  return serve_until_signal(control, metrics, data_plane, snapshots, stats.get());
}

int run_control_plane(const ControlPlaneOptions& options) {
  std::string store_url = options.store_url;
  bool explicit_store = !store_url.empty();
  TlsConfig tls = options.tls;
  if (!options.config_path.empty()) {
    auto loaded = load_config_file(options.config_path, {.local_secrets = true});
    if (!loaded) {
      for (const auto& e : loaded.error()) spdlog::error("{}", e.to_string());
      spdlog::error("{}: not starting: {} error(s)", options.config_path, loaded.error().size());
      return 1;
    }
    if (store_url.empty()) {
      store_url = loaded->config.store.url;
      explicit_store = !store_url.empty();
    }
    if (tls.cert.empty()) tls = loaded->config.tls;
  } else if (store_url.empty() || options.listen.empty()) {
    spdlog::error("rolter control-plane: give --config, or both --store and --listen");
    return 1;
  }
  // The listener's own snapshot carries no routes: this process serves the API alone. Its
  // server settings (limits, timeouts) are the file's, or the defaults.
  SnapshotStore snapshots;
  LoadTracker tracker;
  Metrics metrics;
  metrics.set_build_info(build_info().version, build_info().commit, build_info().build_type);
  SnapshotPublisher publisher(snapshots, tracker, &metrics,
                              options.config_path.empty() ? "control plane" : options.config_path);
  ControlSetup setup;
  if (!set_up_control(options.config_path, store_url, explicit_store, {}, setup)) return 1;
  ControlPlane& control = *setup.control;
  auto listener_snapshot = [&]() -> bool {
    // [server] of the published document, nothing else.
    std::string server_only;
    if (auto loaded = load_config_text(control.document(), "control plane")) {
      const auto& s = loaded->config.server;
      server_only = "[server]\nlisten = \"" + s.listen +
                    "\"\nmax_body_bytes = " + std::to_string(s.max_body_bytes) +
                    "\ndrain_timeout_ms = " + std::to_string(s.drain_timeout_ms) + "\n";
    }
    auto prepared = publisher.prepare(server_only, control.version());
    if (!prepared) {
      for (const auto& p : prepared.error()) spdlog::error("{}", p);
      return false;
    }
    (*prepared)();
    return true;
  };
  if (!listener_snapshot()) return 1;
  AdminApi api(control, &metrics, env_value("ROLTER_UI_DIR"));
  DataPlane data_plane(snapshots, tracker, metrics);
  if (auto listening = data_plane.listen(options.listen, options.workers, &api, tls); !listening) {
    spdlog::error("{}", listening.error());
    return 1;
  }
  data_plane.start(/*services=*/false, {});
  spdlog::info("rolter control plane listening on {} (snapshot version {}; dashboard at {}/ui/)",
               data_plane.url(), control.version(), data_plane.url());
  return serve_until_signal(control, metrics, data_plane, snapshots);
}

}  // namespace rolter
