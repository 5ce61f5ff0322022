// AdminApi: the control plane's HTTP surface (SPEC §10), on top of ControlPlane.
//
//   /api/v1/...   admin tokens (Authorization: Bearer), roles superadmin > admin > viewer:
//                 viewers read; admins also write providers, routes, provider groups and keys;
//                 only superadmins see or change the adaptive routing policy and its telemetry,
//                 and manage admin tokens.
//   /internal/... the node token (Authorization: Bearer) and x-rolter-node-id: snapshot long
//                 polls, adaptive telemetry and node stats from the gateways.
//
// Errors use the OpenAI shape with the offending field in `param`. No answer, log line or metric
// carries a key, token or digest.
//
// Thread-safety: handle() may run on several threads at once (ControlPlane serialises writes).
#pragma once

#include <memory>

#include "control/control_plane.h"
#include "server/control_handler.h"

namespace rolter {

class Metrics;

class AdminApi final : public ControlHandler {
 public:
  // `control` and `metrics` (may be null) must outlive the object.
  AdminApi(ControlPlane& control, Metrics* metrics);
  ~AdminApi() override;

  bool serves(std::string_view path) const override;
  ControlResponse handle(const ControlRequest& request) override;
  uint64_t on_change(uint64_t seen, std::function<void()> wake) override {
    return control_.on_change(seen, std::move(wake));
  }
  void forget(uint64_t ticket) override { control_.forget(ticket); }

 private:
  struct Instruments;
  ControlResponse api(const ControlRequest& request, std::string_view path, std::string_view query);
  ControlResponse internal(const ControlRequest& request, std::string_view path,
                           std::string_view query);

  ControlPlane& control_;
  std::unique_ptr<Instruments> instruments_;
  std::atomic<int64_t> last_prune_ms_{0};
};

}  // namespace rolter
