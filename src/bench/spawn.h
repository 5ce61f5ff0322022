// Starts the processes an HTTP replay needs: a rolter-sim fleet and one or more `rolter serve`
// gateway nodes in front of it (one config, as behind an L4 balancer), all on ephemeral loopback
// ports, and stops them again.
//
// Children are started with fork/exec, get SIGKILL if this process dies (PR_SET_PDEATHSIG), and
// write their output to files in a private temporary directory, which this reads to learn the
// ports: the sim prints a JSON ready line on stdout, rolter logs "listening on http://..." on
// stderr.
//
// Thread-safety: not thread-safe; one owner.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "bench/pd_split.h"
#include "bench/tenants.h"

namespace rolter::bench {

// Forks and execs `path args...` with stdin from `stdin_fd` (or /dev/null), stdout and stderr
// appended to files (created empty), so an owner may truncate a long-running child's log. The
// child gets SIGKILL when this process dies. Returns the pid, or -1.
pid_t spawn_child(const std::string& path, const std::vector<std::string>& args, int stdin_fd,
                  const std::string& out_path, const std::string& err_path);
// The whole content of a file ("" when it cannot be read).
std::string read_all(const std::string& path);
// True (and the child reaped) when `pid` has exited.
bool exited(pid_t pid);
// SIGTERM, then SIGKILL after a grace period; reaps the child and sets `pid` to -1.
void stop_child(pid_t& pid);

struct SpawnedFleet {
  std::vector<std::string> engine_urls;
  std::string control_url;
  std::vector<std::string> gateway_urls;  // one per node
};

struct SpawnOptions {
  size_t engines = 8;
  std::vector<std::string> sim_args;    // appended to rolter-sim's
  std::vector<std::string> strategies;  // one route each, named model_prefix + strategy
  std::string model_prefix;
  size_t block_size = 16;  // the KV-event streams' block size, tokens
  size_t nodes = 1;        // `rolter serve` processes, all with the same config
  // Providers read their load from the engines' /metrics (load_source = "engine_metrics"), so
  // every node sees one load, not only what it sent itself.
  bool engine_metrics_load = false;
  // Starts a redis-server (on a Unix socket in the temporary directory) and gives the nodes
  // [shared_state], so their prefix trees share what they learn (SPEC §6.17).
  bool shared_state = false;
  // --tenants: one [[keys]] entry per tenant, with its band; start() puts each secret in this
  // process's environment under its key_env, which the gateways inherit.
  std::vector<Tenant> tenants;
  // Flow control on: every provider gets max_in_flight_per_instance, and the config a [queue]
  // table. nullopt: off, no bound anywhere.
  std::optional<FlowControlSettings> flow_control;
  // Disaggregated (SPEC §18): rolter-sim runs P prefill + D decode engines (--prefill-engines,
  // --decode-engines; `engines` must be P + D), and the config has two providers, "pd-prefill"
  // (role prefill, engines 0..P-1) and "pd-decode" (role decode, engines P..P+D-1), and one route
  // per strategy named model_prefix + "pd-" + strategy with mode = "disaggregated": the strategy
  // picks the prefill engine, the decode stage keeps its default (least load).
  std::optional<PdSplit> pd;
  uint64_t min_uncached_tokens = 512;  // the disaggregated routes' min_uncached_tokens
};

class Spawner {
 public:
  explicit Spawner(std::string bin_dir);
  ~Spawner();  // stops whatever still runs
  Spawner(const Spawner&) = delete;
  Spawner& operator=(const Spawner&) = delete;

  // Starts the sim engines and `nodes` gateways with one route per strategy over all engines.
  // The engines publish KV events on ephemeral ports, and each provider subscribes to its engine's
  // stream and asks it for token ids (tokenize = "engine"), so the KV-event strategies run as a
  // user would run them: with plain chat requests.
  tl::expected<SpawnedFleet, std::string> start(const SpawnOptions& options);
  // Stops every process (SIGTERM, then SIGKILL after a grace period).
  void stop();

  // The gateways' rolter.toml: one provider per engine, one route per strategy over all of them,
  // the tenants' [[keys]] and flow control's bounds; with `pd`, the disaggregated providers and
  // routes instead (see SpawnOptions::pd). `kv_ports` and `kv_replay_ports` are indexed
  // like `engine_urls` (0: none); `redis_url` empty: no [shared_state].
  static std::string gateway_config(const SpawnOptions& o,
                                    const std::vector<std::string>& engine_urls,
                                    const std::vector<int>& kv_ports,
                                    const std::vector<int>& kv_replay_ports,
                                    const std::string& redis_url);

 private:
  using Deadline = std::chrono::steady_clock::time_point;
  // What a started rolter-sim said in its ready line.
  struct Sim {
    std::vector<std::string> engine_urls;
    std::vector<int> kv_ports;         // 0: the engine publishes no KV events
    std::vector<int> kv_replay_ports;  // 0: no replay endpoint
    std::string control_url;
  };
  // Starts rolter-sim and waits for its ready line.
  tl::expected<Sim, std::string> start_sim(const SpawnOptions& o, Deadline deadline);
  // Starts redis-server for [shared_state]; its URL (unix://...).
  tl::expected<std::string, std::string> start_redis(Deadline deadline);
  // Starts `nodes` rolter serve on `config` and waits until each listens; their URLs.
  tl::expected<std::vector<std::string>, std::string> start_gateways(const std::string& config,
                                                                     size_t nodes,
                                                                     Deadline deadline);

  std::string bin_dir_;
  std::string dir_;  // temporary directory for config and logs
  pid_t sim_pid_ = -1;
  pid_t redis_pid_ = -1;
  std::vector<pid_t> rolter_pids_;
  int sim_stdin_ = -1;  // the sim exits when this closes
};

}  // namespace rolter::bench
