// The commands of the `rolter` binary that run a server (SPEC §1); main.cc parses the command
// line and calls one of these. Each returns the process's exit code.
#pragma once

#include <string>

#include "app/data_plane.h"

namespace rolter {

struct ServeOptions {
  std::string config_path = "rolter.toml";
  std::string listen;    // "" = server.listen
  unsigned workers = 0;  // 0 = server.workers
  TelemetryTarget telemetry;
};
// rolter serve: data plane + control plane API on one port, with the store beside the config.
int run_serve(const ServeOptions& options);

struct ControlPlaneOptions {
  std::string config_path;  // "" = everything lives in the store
  std::string store_url;    // "" = [store] url, or sqlite beside the config
  std::string listen;       // "" = server.listen
  unsigned workers = 0;
  TlsConfig tls;  // empty = [tls] of the config
};
// rolter control-plane: the API, store and snapshot publisher alone.
int run_control_plane(const ControlPlaneOptions& options);

struct GatewayOptions {
  std::string control_plane;  // base URL
  std::string listen;
  std::string node_id;    // "" = the host name
  std::string state_dir;  // "" = nothing is kept on disk
  unsigned workers = 0;
  TlsConfig tls;  // the listener's certificate and key; empty = plaintext
};
// rolter gateway: a data-plane node that serves what its control plane publishes.
int run_gateway(const GatewayOptions& options);

}  // namespace rolter
