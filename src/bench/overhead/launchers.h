// Starts the processes a run owns: the canned upstream and the reverse proxies (nginx and
// HAProxy, each from its own generated config in a private directory) and `rolter serve` (from a
// generated rolter.toml), each on a loopback port, and waits with a deadline until it accepts
// connections. A start that fails says why, with the last lines of the process's log.
//
// Thread-safety: not thread-safe; the bench's main thread starts and owns them.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "bench/overhead/child_process.h"
#include "bench/overhead/nginx_conf.h"

namespace rolter::bench::overhead {

struct Launched {
  std::unique_ptr<ChildProcess> process;
  std::string url;          // http://127.0.0.1:port
  std::vector<pid_t> pids;  // the processes that serve: nginx's workers, or the one process
  std::string config_path;
  bool access_log_off = false;  // rolter: started with --no-access-log
};

// `conf` renders the configuration for a chosen port. Run as root, workers run as root too (the
// temporary directory is private to this user).
tl::expected<Launched, std::string> start_nginx(
    const std::string& nginx_path, const std::string& label, const std::string& parent_dir,
    int workers, const std::function<std::string(const NginxCommon&)>& conf);

// HAProxy (haproxy_conf()) in the foreground (-db), one process of `threads` threads, in
// `parent_dir`/haproxy, forwarding to 127.0.0.1:`upstream_port`.
tl::expected<Launched, std::string> start_haproxy(const std::string& haproxy_path,
                                                  const std::string& parent_dir, int threads,
                                                  uint16_t upstream_port);

// rolter.toml for the bench: one openai provider at `upstream_url`, one route "bench"
// (round_robin) to it, `workers` worker threads.
std::string rolter_toml(const std::string& upstream_url, int workers,
                        const std::string& provider_fields = "");

// The [[keys]] and [limits] that rolter_toml() gets for a limited path: one key, `limited_key`
// (its SHA-256 is written), whose rpm, tpm and max_in_flight are far above any load the bench
// makes, so every request is counted and none refused. `redis_socket` "" = the local backend.
inline constexpr const char* kLimitedKey = "rk-bench-limited-key";
std::string limited_key_toml(const std::string& redis_socket);

// The provider fields of the flow-controlled path (--flow-control): a saturation bound far above
// the bench's load, so every request takes the queue's unsaturated check and never waits.
std::string flow_control_provider_fields();

// The [tracing] of a traced path: every request sampled, spans posted to `otlp_endpoint`.
std::string tracing_toml(const std::string& otlp_endpoint);

// Whether this rolter's `serve` knows --no-access-log (read from its --help).
bool rolter_has_no_access_log(const std::string& rolter_path);

// Starts `rolter serve`, with --no-access-log when it has it: the per-request JSON line would
// otherwise be a cost nginx (access_log off) does not pay.
// `name` names its config file and logs; `extra_toml` is appended to rolter_toml(), and
// `provider_fields` go into its provider table.
tl::expected<Launched, std::string> start_rolter(const std::string& rolter_path,
                                                 const std::string& parent_dir,
                                                 const std::string& upstream_url, int workers,
                                                 const std::string& name = "rolter",
                                                 const std::string& extra_toml = "",
                                                 const std::string& provider_fields = "");
// redis-server on a Unix socket in `parent_dir`, persistence off; waits until it listens.
tl::expected<Launched, std::string> start_redis(const std::string& parent_dir,
                                                std::string& socket_path);

}  // namespace rolter::bench::overhead
