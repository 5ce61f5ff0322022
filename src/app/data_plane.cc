#include "app/data_plane.h"

#include <sys/resource.h>
#include <unistd.h>

#include <spdlog/spdlog.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdlib>
#include <functional>

#include "app/service_notify.h"
#include "collect/adaptive_telemetry/adaptive_telemetry.h"
#include "collect/discovery/discovery_service.h"
#include "collect/engine_metrics/engine_scraper.h"
#include "collect/health/health_checker.h"
#include "collect/kv_events/kv_event_service.h"
#include "collect/lmcache/lmcache_poller.h"
#include "collect/shared_prefixes/shared_prefix_stream.h"
#include "collect/trace_export/trace_exporter.h"
#include "collect/usage_flush/usage_flusher.h"
#include "collect/usage_flush/usage_post_sink.h"
#include "config/url.h"
#include "observe/metrics.h"
#include "proxy/request_log.h"
#include "server/server.h"
#include "server/worker_tenancy.h"

namespace rolter {
namespace {

namespace asio = boost::asio;

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

void reopen_access_log_file() {
  const std::string destination = access_log_destination();
  if (destination == "stderr" || destination == "off") {
    spdlog::info("SIGUSR1: the access log goes to {}: nothing to reopen", destination);
    return;
  }
  if (auto reopened = reopen_access_log(); !reopened) {
    spdlog::error("SIGUSR1: access log: {}; lines still go to the file opened before",
                  reopened.error());
    return;
  }
  spdlog::info("SIGUSR1: access log {} reopened", destination);
}

}  // namespace

std::string env_value(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "rolter";
  return name;
}

struct DataPlane::Parts {
  std::unique_ptr<Server> server;
  std::unique_ptr<HealthChecker> health;
  std::unique_ptr<EngineScraper> engine_metrics;
  std::unique_ptr<KvEventService> kv_events;
  std::unique_ptr<LmcachePoller> lmcache;
  std::unique_ptr<AdaptiveTelemetry> telemetry;
  std::unique_ptr<SharedPrefixStream> shared_prefixes;
  std::unique_ptr<DiscoveryService> discovery;
  // Keys' limits and usage records (SPEC §15): what the workers read, and the ledger's flusher.
  TenancyServices tenancy;
  std::unique_ptr<UsageLedger> ledger;  // one shard per worker
  std::unique_ptr<UsageFlusher> usage_flusher;
  // Spans of recorded requests ([tracing], SPEC §17): the queue the workers push to, sized at
  // start-up, and the thread that exports it.
  std::unique_ptr<SpanQueue> spans;
  std::unique_ptr<TraceExporter> trace_exporter;
};

DataPlane::DataPlane(SnapshotStore& store, LoadTracker& tracker, Metrics& metrics)
    : store_(store), tracker_(tracker), metrics_(metrics), parts_(std::make_unique<Parts>()) {}

DataPlane::~DataPlane() = default;

tl::expected<void, std::string> DataPlane::listen(const std::string& listen_override,
                                                  unsigned workers_override,
                                                  ControlHandler* control, const TlsConfig& tls) {
  raise_file_limit();
  const auto& config = store_.current()->config();
  const std::string listen = listen_override.empty() ? config.server.listen : listen_override;
  auto address = parse_host_port(listen, /*allow_port_zero=*/true);
  if (!address) return tl::unexpected("listen address '" + listen + "': " + address.error());
  const unsigned workers = workers_override > 0 ? workers_override : config.server.workers;
  parts_->server = std::make_unique<Server>(store_, workers);
  Server& server = *parts_->server;
  server.state().metrics = &metrics_;
  server.state().tracker = &tracker_;
  server.state().control = control;
  parts_->tenancy.local = &tracker_.limits();
  server.state().tenancy = &parts_->tenancy;
  parts_->spans = std::make_unique<SpanQueue>(config.tracing.max_queue);
  server.state().spans = parts_->spans.get();
  auto port = server.listen(address->host, address->port);
  if (!port) return tl::unexpected(port.error());
  if (!tls.cert.empty()) {
    if (auto used = server.use_tls(tls.cert, tls.key); !used) {
      return tl::unexpected("tls: " + used.error());
    }
  }
  port_ = *port;
  const std::string shown_host =
      address->host.find(':') != std::string::npos ? "[" + address->host + "]" : address->host;
  url_ = (tls.cert.empty() ? "http://" : "https://") + shown_host + ":" + std::to_string(port_);
  if (const auto& metrics_listen = config.server.metrics_listen; !metrics_listen.empty()) {
    auto metrics_address = parse_host_port(metrics_listen, /*allow_port_zero=*/true);
    auto metrics_port = metrics_address
                            ? server.listen_metrics(metrics_address->host, metrics_address->port)
                            : tl::unexpected(metrics_address.error());
    if (!metrics_port) return tl::unexpected("server.metrics_listen: " + metrics_port.error());
    spdlog::info("metrics listening on http://{}:{} (/metrics, /healthz, /readyz)",
                 metrics_address->host, *metrics_port);
  }
  return {};
}

void DataPlane::start(bool services, const TelemetryTarget& telemetry,
                      const DiscoveryHooks& discovery) {
  start_usage(telemetry);
  // Idle until the config names an otlp_endpoint; a reload may set, change or remove it.
  parts_->trace_exporter = std::make_unique<TraceExporter>(
      store_, *parts_->spans, &metrics_,
      TraceResource{.service_version = ROLTER_VERSION, .host_name = host_name()});
  parts_->trace_exporter->start();
  parts_->server->start();
  if (!services) return;
  if (discovery.found != nullptr) {
    parts_->discovery = std::make_unique<DiscoveryService>(
        store_, *discovery.found, DiscoveryService::Options{.changed = discovery.changed});
    parts_->discovery->start();
  }
  parts_->health = std::make_unique<HealthChecker>(store_);
  parts_->health->start();
  parts_->engine_metrics = std::make_unique<EngineScraper>(store_);
  parts_->engine_metrics->start();
  parts_->kv_events = std::make_unique<KvEventService>(store_);
  parts_->kv_events->start();
  parts_->lmcache = std::make_unique<LmcachePoller>(store_);
  parts_->lmcache->start();
  parts_->shared_prefixes = std::make_unique<SharedPrefixStream>(store_, tracker_.prefix_sharing());
  parts_->shared_prefixes->start();
  parts_->telemetry = std::make_unique<AdaptiveTelemetry>(
      store_, AdaptiveTelemetry::Options{
                  .control_plane = telemetry.control_plane,
                  .node_id = telemetry.node_id.empty() ? host_name() : telemetry.node_id,
                  .node_token = telemetry.node_token,
                  .deliver = telemetry.deliver});
  parts_->telemetry->start();
  if (!telemetry.control_plane.empty()) {
    spdlog::info("adaptive telemetry: reporting to {} every 15 s", telemetry.control_plane);
  }
}

void DataPlane::start_usage(const TelemetryTarget& telemetry) {
  UsageFlusher::Sink sink = telemetry.store_usage;
  if (!sink && !telemetry.control_plane.empty()) {
    sink = make_usage_post_sink(
        {.control_plane = telemetry.control_plane,
         .node_id = telemetry.node_id.empty() ? host_name() : telemetry.node_id,
         .node_token = telemetry.node_token,
         .node_version = ROLTER_VERSION});
  }
  if (!sink) return;
  const auto every = std::chrono::seconds(store_.current()->config().usage.flush_secs);
  // After listen(), as start() is: the server and its worker count exist.
  parts_->ledger = std::make_unique<UsageLedger>(parts_->server->worker_count());
  parts_->usage_flusher = std::make_unique<UsageFlusher>(*parts_->ledger, std::move(sink),
                                                         UsageFlusher::Options{.interval = every});
  parts_->usage_flusher->start();
  parts_->tenancy.ledger = parts_->ledger.get();
}

void DataPlane::begin_drain() {
  if (parts_->server) parts_->server->begin_drain();
}

void DataPlane::stop(std::chrono::milliseconds drain) {
  if (!parts_->server) return;
  const auto left = parts_->server->drain(drain);
  if (left > 0) spdlog::warn("drain timeout: {} request(s) cut", left);
  if (parts_->health) parts_->health->stop();
  if (parts_->engine_metrics) parts_->engine_metrics->stop();
  if (parts_->kv_events) parts_->kv_events->stop();
  if (parts_->lmcache) parts_->lmcache->stop();
  if (parts_->telemetry) parts_->telemetry->stop();
  if (parts_->shared_prefixes) parts_->shared_prefixes->stop();
  if (parts_->discovery) parts_->discovery->stop();
  parts_->server->stop();
  // After the drain: the final flush carries the last requests' usage, and the last spans.
  if (parts_->usage_flusher) parts_->usage_flusher->stop();
  if (parts_->trace_exporter) parts_->trace_exporter->stop();
}

int run_until_signal(const SignalHooks& hooks) {
  asio::io_context control;
  asio::signal_set reload_signal(control, SIGHUP);
  asio::signal_set stop_signals(control, SIGTERM, SIGINT);
  std::function<void()> wait_hup = [&] {
    reload_signal.async_wait([&](const boost::system::error_code& ec, int) {
      if (ec) return;
      notify_reloading();
      hooks.reload("SIGHUP");
      notify_ready("serving");
      wait_hup();
    });
  };
  wait_hup();
  // SIGUSR1: logrotate renamed the access log; lines go to a new file by the same name.
  asio::signal_set reopen_signal(control, SIGUSR1);
  std::function<void()> wait_usr1 = [&] {
    reopen_signal.async_wait([&](const boost::system::error_code& ec, int) {
      if (ec) return;
      reopen_access_log_file();
      wait_usr1();
    });
  };
  wait_usr1();
  asio::steady_timer watch(control);
  std::function<void()> wait_watch = [&] {
    watch.expires_after(std::chrono::milliseconds(500));
    watch.async_wait([&](const boost::system::error_code& ec) {
      if (ec) return;
      hooks.tick();
      notify_watchdog();
      wait_watch();
    });
  };
  wait_watch();
  stop_signals.async_wait([&](const boost::system::error_code& ec, int signal) {
    if (ec) return;
    hooks.begin_drain();
    spdlog::info("{}: draining", signal == SIGTERM ? "SIGTERM" : "SIGINT");
    notify_stopping();
    notify_status("draining");
    reload_signal.cancel();
    reopen_signal.cancel();
    watch.cancel();
    hooks.stop();
    spdlog::info("stopped");
  });
  // The caller has bound its listeners and published its first snapshot.
  notify_ready("serving");
  control.run();
  return 0;
}

}  // namespace rolter
