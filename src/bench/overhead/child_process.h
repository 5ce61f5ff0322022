// A process the bench starts and owns (the upstream nginx, the nginx proxy, rolter): started with
// spawn_child() (SIGKILL if the bench dies), output in files of a private directory, stopped with
// SIGTERM then SIGKILL when the owner goes away. Plus the two waits every start needs, each with
// a deadline: a free loopback port, and a port that accepts connections.
//
// Thread-safety: not thread-safe; one owner.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <tl/expected.hpp>
#include <vector>

namespace rolter::bench::overhead {

class ChildProcess {
 public:
  // Starts `path args...` with stdout and stderr in `dir`/`label`.out and .err.
  static tl::expected<std::unique_ptr<ChildProcess>, std::string> start(
      const std::string& label, const std::string& path, const std::vector<std::string>& args,
      const std::string& dir);
  ~ChildProcess();  // stop()
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  const std::string& label() const { return label_; }
  bool running();  // false (and reaped) once it has exited
  std::string stderr_text() const;
  // The last `lines` lines of its stdout and stderr, for an error message.
  std::string log_tail(size_t lines = 20) const;
  // Empties both logs (the child appends, so they restart from 0 bytes): bounds the disk a long
  // run's per-request log lines take.
  void truncate_logs() const;
  void stop();

 private:
  ChildProcess(std::string label, pid_t pid, std::string out, std::string err)
      : label_(std::move(label)), pid_(pid), out_(std::move(out)), err_(std::move(err)) {}

  std::string label_;
  pid_t pid_;
  std::string out_, err_;
};

// A TCP port free on 127.0.0.1 right now (bound to port 0, read back, closed).
tl::expected<uint16_t, std::string> free_port();

// True once 127.0.0.1:`port` accepts a connection.
bool accepts_connections(uint16_t port);

// A fresh private directory under $TMPDIR (or /tmp), removed by the owner.
tl::expected<std::string, std::string> make_private_dir(const std::string& prefix);

// How long any child may take to become ready.
inline constexpr std::chrono::seconds kStartDeadline{20};

}  // namespace rolter::bench::overhead
