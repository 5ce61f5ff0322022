// The processes of one run and the paths through them: the upstream (the canned nginx, started
// here, or --upstream), then direct, rolter, rolter with a limited key per --limits backend, the
// nginx proxy, the HAProxy proxy and every --peer, in that order,
// which is the order of every round. Stopping (the destructor) ends every process the bench
// started and removes the private directory.
//
// Thread-safety: not thread-safe; the bench's main thread owns it.
#pragma once

#include <memory>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "bench/overhead/child_process.h"
#include "bench/overhead/launchers.h"
#include "bench/overhead/options.h"
#include "bench/overhead/peer_spec.h"
#include "bench/overhead/result.h"
#include "bench/overhead/target.h"

namespace rolter::bench::overhead {

struct PathUnderTest {
  PathResult result;  // identity and resources; the runner appends rounds
  Target target;
  ChildProcess* owned = nullptr;  // the process the bench started for this path, if any
};

class Environment {
 public:
  // Tools already resolved: `rolter_path` "" skips rolter, `nginx_path` "" skips the nginx
  // proxy (and needs --upstream; --no-nginx skips only the proxy, nginx still serves the canned
  // upstream), `haproxy_path` "" skips the HAProxy proxy.
  static tl::expected<std::unique_ptr<Environment>, std::string> start(
      const OverheadOptions& options, std::vector<PeerSpec> peers, const std::string& rolter_path,
      const std::string& nginx_path, const std::string& haproxy_path);
  ~Environment();
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

  const std::string& dir() const { return dir_; }
  const std::string& upstream_url() const { return upstream_url_; }
  const std::string& upstream_description() const { return upstream_description_; }
  std::vector<PathUnderTest>& paths() { return paths_; }
  std::vector<std::string>& notes() { return notes_; }
  bool rolter_access_log_off() const { return rolter_access_log_off_; }

 private:
  Environment() = default;
  tl::expected<void, std::string> start_upstream(const OverheadOptions& o,
                                                 const std::string& nginx_path);
  tl::expected<void, std::string> add_owned(const std::string& name, const std::string& kind,
                                            Launched launched, const std::string& workers);
  tl::expected<void, std::string> add_peer(const PeerSpec& peer);
  // rolter with every request on a limited key (--limits `backend`), and its redis-server.
  tl::expected<void, std::string> add_limited_rolter(const OverheadOptions& o,
                                                     const std::string& rolter_path,
                                                     const std::string& backend);
  // rolter tracing every request to an OTLP endpoint where nothing listens
  // (--tracing-dead-collector).
  tl::expected<void, std::string> add_traced_rolter(const OverheadOptions& o,
                                                    const std::string& rolter_path);
  // rolter tracing every request to the canned upstream's /v1/traces, which takes every batch
  // (--tracing-live-collector).
  tl::expected<void, std::string> add_live_traced_rolter(const OverheadOptions& o,
                                                         const std::string& rolter_path);
  // rolter with flow control on and never saturated (--flow-control).
  tl::expected<void, std::string> add_flow_controlled_rolter(const OverheadOptions& o,
                                                             const std::string& rolter_path);

  std::string dir_;
  std::vector<std::unique_ptr<ChildProcess>> processes_;  // stopped in reverse order
  std::string upstream_url_;
  std::string upstream_description_;
  std::vector<pid_t> upstream_pids_;
  std::vector<PathUnderTest> paths_;
  std::vector<std::string> notes_;
  bool rolter_access_log_off_ = false;
};

}  // namespace rolter::bench::overhead
