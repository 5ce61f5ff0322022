// rolter gateway: a data-plane node whose configuration comes from a control plane (SPEC §1,
// §10). It serves the document the control plane publishes, through the same build and publish
// as a file reload, keeps the last one on disk, reports its traffic and adaptive telemetry, and
// keeps serving while the control plane is away.
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>

#include "app/build_info.h"
#include "app/commands.h"
#include "app/snapshot_publisher.h"
#include "collect/follow/node_stats.h"
#include "collect/follow/snapshot_follower.h"
#include "observe/metrics.h"

namespace rolter {
namespace {

// A node with neither a saved snapshot nor an answer from its control plane waits this long
// before it gives up starting: there is nothing it could serve.
constexpr auto kFirstSnapshotWait = std::chrono::seconds(30);

}  // namespace

int run_gateway(const GatewayOptions& options) {
  if (options.control_plane.empty() || options.listen.empty()) {
    spdlog::error("rolter gateway: --control-plane URL and --listen HOST:PORT are required");
    return 1;
  }
  const std::string node_token = env_value("ROLTER_NODE_TOKEN");
  if (node_token.empty()) {
    spdlog::error("rolter gateway: set ROLTER_NODE_TOKEN to the control plane's node token");
    return 1;
  }
  const std::string node_id = options.node_id.empty() ? host_name() : options.node_id;
  SnapshotStore snapshots;
  LoadTracker tracker;
  Metrics metrics(options.workers);  // 0: cells for one worker per core; more workers share
  metrics.set_build_info(build_info().version, build_info().commit, build_info().build_type);
  DiscoveredInstances discovered;
  SnapshotPublisher publisher(snapshots, tracker, &metrics, "control plane snapshot", &discovered);
  SnapshotFollower follower(
      SnapshotFollower::Options{
          .control_plane = options.control_plane,
          .node_id = node_id,
          .node_token = node_token,
          .node_version = ROLTER_VERSION,
          .state_dir = options.state_dir,
      },
      [&](const std::string& text, uint64_t version) -> std::vector<std::string> {
        auto prepared = publisher.prepare(text, version);
        if (!prepared) return prepared.error();
        (*prepared)();
        spdlog::info("snapshot version {} applied ({} routes)", version,
                     snapshots.current()->config().routes.size());
        return {};
      },
      &metrics);
  if (follower.load_saved()) {
    spdlog::info("serving the saved snapshot, version {}, until the control plane answers",
                 follower.serving_version());
  }
  follower.start();
  if (!follower.wait_first(kFirstSnapshotWait)) {
    spdlog::error(
        "no snapshot: the control plane at {} did not answer within {} s, and no saved "
        "snapshot was found{}",
        options.control_plane, kFirstSnapshotWait.count(),
        options.state_dir.empty() ? " (no --state-dir)" : " in " + options.state_dir);
    follower.stop();
    return 1;
  }
  DataPlane data_plane(snapshots, tracker, metrics);
  if (auto listening = data_plane.listen(options.listen, options.workers, nullptr, options.tls);
      !listening) {
    spdlog::error("{}", listening.error());
    follower.stop();
    return 1;
  }
  data_plane.start(
      /*services=*/true,
      TelemetryTarget{
          .control_plane = options.control_plane, .node_id = node_id, .node_token = node_token},
      {.found = &discovered, .changed = [&] { publisher.refresh_discovered(); }});
  NodeStatsReporter stats(metrics,
                          NodeStatsReporter::Options{.control_plane = options.control_plane,
                                                     .node_id = node_id,
                                                     .node_token = node_token,
                                                     .node_version = ROLTER_VERSION,
                                                     .tracker = &tracker},
                          [&] { return follower.serving_version(); });
  stats.start();
  spdlog::info("rolter gateway listening on {} (node {}, snapshot version {}, control plane {})",
               data_plane.url(), node_id, follower.serving_version(), options.control_plane);
  return run_until_signal({
      .reload =
          [](const char*) {
            spdlog::info("SIGHUP: a gateway's configuration comes from its control plane; ignored");
          },
      .tick = [] {},
      .begin_drain = [&] { data_plane.begin_drain(); },
      .stop =
          [&] {
            follower.stop();
            stats.stop();
            data_plane.stop(std::chrono::milliseconds(
                snapshots.current()->config().server.drain_timeout_ms));
          },
  });
}

}  // namespace rolter
