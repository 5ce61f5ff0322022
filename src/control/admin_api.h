// AdminApi: the control plane's HTTP surface (SPEC §10), on top of ControlPlane.
//
//   /api/v1/...   admin tokens (Authorization: Bearer), roles superadmin > admin > viewer:
//                 viewers read; admins also write providers, routes, provider groups, keys
//                 and teams; only superadmins see or change the adaptive routing policy and its
//                 telemetry, and manage admin tokens.
//   /internal/... the node token (Authorization: Bearer) and x-rolter-node-id: snapshot long
//                 polls, adaptive telemetry, node stats and usage batches from the gateways.
//   /ui/          the dashboard (ui/dashboard.h); it logs in with an admin token and reads the
//                 API above, including what only it needs: /api/v1/catalog, /api/v1/strategies
//                 and /api/v1/policy-thresholds (the code of `rolter policy-thresholds`).
//
// Errors use the OpenAI shape with the offending field in `param`. No answer, log line or metric
// carries a key, token or digest.
//
// Thread-safety: handle() may run on several threads at once (ControlPlane serialises writes).
#pragma once

#include <memory>

#include "control/control_plane.h"
#include "server/control_handler.h"
#include "ui/dashboard.h"

namespace rolter {

class Metrics;

class AdminApi final : public ControlHandler {
 public:
  // `control` and `metrics` (may be null) must outlive the object. `ui_dir` (ROLTER_UI_DIR, for
  // editing the dashboard) serves its files from disk instead of the binary; "" = embedded.
  AdminApi(ControlPlane& control, Metrics* metrics, std::string ui_dir = "");
  ~AdminApi() override;

  bool serves(std::string_view path) const override;
  ControlResponse handle(const ControlRequest& request) override;
  uint64_t on_change(uint64_t seen, std::function<void()> wake) override {
    return control_.on_change(seen, std::move(wake));
  }
  void forget(uint64_t ticket) override { control_.forget(ticket); }

  // What a node reports, as the internal API takes it (nodes post it there; `rolter serve`
  // hands its own node's reports here directly). Errors carry the status to answer.
  tl::expected<size_t, ControlError> ingest_adaptive_telemetry(const std::string& node_id,
                                                               const nlohmann::json& body);
  tl::expected<void, ControlError> ingest_node_stats(const std::string& node_id,
                                                     const nlohmann::json& body);
  // A node's usage batch (POST /internal/v1/usage), added to the store in one transaction.
  // Returns the number of rows.
  tl::expected<size_t, ControlError> ingest_usage(const std::vector<UsageRow>& rows);
  // Records that a node was heard from, serving `snapshot_version`.
  void touch_node(const std::string& node_id, std::string_view node_version,
                  uint64_t snapshot_version);

 private:
  struct Instruments;
  ControlResponse api(const ControlRequest& request, std::string_view path, std::string_view query);
  ControlResponse internal(const ControlRequest& request, std::string_view path,
                           std::string_view query);

  ControlPlane& control_;
  Dashboard dashboard_;
  std::unique_ptr<Instruments> instruments_;
  std::atomic<int64_t> last_prune_ms_{0};
};

}  // namespace rolter
