// Starts the processes an HTTP replay needs: a rolter-sim fleet and a `rolter serve` gateway in
// front of it, both on ephemeral loopback ports, and stops them again.
//
// Children are started with fork/exec, get SIGKILL if this process dies (PR_SET_PDEATHSIG), and
// write their output to files in a private temporary directory, which this reads to learn the
// ports: the sim prints a JSON ready line on stdout, rolter logs "listening on http://..." on
// stderr.
//
// Thread-safety: not thread-safe; one owner.
#pragma once

#include <sys/types.h>

#include <string>
#include <tl/expected.hpp>
#include <vector>

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
  std::string gateway_url;
};

class Spawner {
 public:
  explicit Spawner(std::string bin_dir);
  ~Spawner();  // stops whatever still runs
  Spawner(const Spawner&) = delete;
  Spawner& operator=(const Spawner&) = delete;

  // Starts `engines` sim engines (extra arguments appended) and a gateway with one route per
  // strategy, named model_prefix + strategy, over all engines. The engines publish KV events on
  // ephemeral ports, and each provider subscribes to its engine's stream (blocks of `block_size`
  // tokens) and asks it for token ids (tokenize = "engine"), so the KV-event strategies run as a
  // user would run them: with plain chat requests.
  tl::expected<SpawnedFleet, std::string> start(size_t engines,
                                                const std::vector<std::string>& sim_args,
                                                const std::vector<std::string>& strategies,
                                                const std::string& model_prefix, size_t block_size);
  // Stops both processes (SIGTERM, then SIGKILL after a grace period).
  void stop();

 private:
  std::string bin_dir_;
  std::string dir_;  // temporary directory for config and logs
  pid_t sim_pid_ = -1;
  pid_t rolter_pid_ = -1;
  int sim_stdin_ = -1;  // the sim exits when this closes
};

}  // namespace rolter::bench
