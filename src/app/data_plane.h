// DataPlane: the gateway's listener, its workers, and the fleet services that feed its snapshots
// (health checks, engine metrics, KV events, LMCache, adaptive telemetry). Every command that
// serves traffic runs one; where its snapshots come from is the command's business.
//
// Thread-safety: construct, listen(), start() and stop() from the main thread.
#pragma once

#include <tl/expected.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "config/config.h"
#include "fleet/discovered_instances.h"
#include "fleet/load_tracker.h"
#include "snapshot/snapshot_store.h"
#include "usage/usage_ledger.h"

namespace rolter {

class ControlHandler;
class Metrics;

// Where a node reports adaptive-routing telemetry (SPEC §6.10); empty = nowhere.
struct TelemetryTarget {
  std::string control_plane;
  std::string node_id;
  std::string node_token;
  // Instead of posting: hands each document to the control plane in this process.
  std::function<bool(const std::string& node_id, const std::string& body)> deliver;
  // Where usage records go (SPEC §15), every [usage] flush_secs: to this function when set (the
  // control plane in this process), else posted to `control_plane`; neither = not recorded.
  std::function<bool(std::vector<UsageRow>&& rows)> store_usage;
};

// Providers whose instances are found by DNS (SPEC §17): where the lookups put what they find,
// and what to call after each (the publisher's refresh_discovered()). A null `found` = none.
struct DiscoveryHooks {
  DiscoveredInstances* found = nullptr;
  std::function<void()> changed;
};

std::string host_name();
// The value of environment variable `name`, "" when unset.
std::string env_value(const char* name);

class DataPlane {
 public:
  // All must outlive the object. The store must hold a snapshot before listen().
  DataPlane(SnapshotStore& store, LoadTracker& tracker, Metrics& metrics);
  ~DataPlane();

  // Binds the main listener (`listen` = HOST:PORT, "" = server.listen of the snapshot) and, when
  // the snapshot sets server.metrics_listen, the metrics listener. `control` (may be null) is
  // served on the main listener, which terminates TLS when `tls` names a certificate. Returns a
  // message on failure.
  tl::expected<void, std::string> listen(const std::string& listen, unsigned workers,
                                         ControlHandler* control, const TlsConfig& tls = {});
  // Starts the workers and, with `services`, the fleet services (DNS discovery among them).
  void start(bool services, const TelemetryTarget& telemetry, const DiscoveryHooks& discovery = {});
  // "http://host:port" (or https) of the main listener.
  const std::string& url() const { return url_; }
  uint16_t port() const { return port_; }
  // Stops accepting and turns /readyz to 503; returns at once. stop() does it too.
  void begin_drain();
  // Stops accepting, lets requests in flight finish (up to `drain`), stops everything.
  void stop(std::chrono::milliseconds drain);

 private:
  struct Parts;
  // With a place to store usage: the ledger the workers add to, flushed in the background.
  void start_usage(const TelemetryTarget& telemetry);
  SnapshotStore& store_;
  LoadTracker& tracker_;
  Metrics& metrics_;
  std::unique_ptr<Parts> parts_;
  std::string url_;
  uint16_t port_ = 0;
};

// What the main thread's loop calls (run_until_signal).
struct SignalHooks {
  std::function<void(const char* why)> reload;  // on SIGHUP
  std::function<void()> tick;                   // every 500 ms
  // At SIGTERM or SIGINT, before the drain is announced: from its return /readyz answers 503.
  std::function<void()> begin_drain;
  std::function<void()> stop;  // then, once: drains and stops everything
};

// Runs the main thread's loop until SIGTERM or SIGINT, calling `hooks`, and reopens the access
// log's file on SIGUSR1 (log rotation). Returns 0. It tells the service manager
// (app/service_notify.h): READY=1 as it starts, so call it once the listeners are bound and the
// first snapshot is published; RELOADING=1 then READY=1 around each SIGHUP's `reload`;
// STOPPING=1 after `begin_drain` and before `stop`; WATCHDOG=1 with each tick when the unit asks
// for a watchdog.
int run_until_signal(const SignalHooks& hooks);

}  // namespace rolter
