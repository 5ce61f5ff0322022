// What the bench reads from /proc about a gateway process: CPU time (utime + stime from
// /proc/PID/stat), resident memory (VmRSS, VmHWM from /proc/PID/status), and which process
// listens on a TCP port (the LISTEN entry of /proc/net/tcp{,6}, then the /proc/PID/fd link
// "socket:[inode]"), so a gateway started by someone else can be measured too.
//
// The parse_* functions are pure; the read_* and find_* functions read /proc.
//
// Thread-safety: no shared state; call from any thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace rolter::bench::overhead {

struct CpuTicks {
  uint64_t utime = 0;  // clock ticks (sysconf(_SC_CLK_TCK))
  uint64_t stime = 0;
  pid_t ppid = 0;
};

// Parses the text of /proc/PID/stat. The command name (field 2) is in parentheses and may hold
// spaces and ')' itself, so fields are counted from the last ')'.
std::optional<CpuTicks> parse_stat(std::string_view text);

struct MemoryKb {
  uint64_t rss_kb = 0;  // VmRSS
  uint64_t hwm_kb = 0;  // VmHWM: the peak resident set since the process started
};

// Parses the text of /proc/PID/status; nullopt when VmRSS is missing (a zombie or kernel thread).
std::optional<MemoryKb> parse_status(std::string_view text);

// The socket inode of a LISTEN (state 0A) entry for local `port` in the text of /proc/net/tcp or
// /proc/net/tcp6, if any.
std::optional<uint64_t> parse_listen_inode(std::string_view net_tcp, uint16_t port);

// CPU seconds (utime + stime) of the processes, summed; nullopt when any cannot be read.
std::optional<double> read_cpu_seconds(const std::vector<pid_t>& pids);

// VmRSS and VmHWM of the processes, summed; nullopt when any cannot be read.
std::optional<MemoryKb> read_memory(const std::vector<pid_t>& pids);

// The direct children of `parent` (nginx's workers under its master).
std::vector<pid_t> find_children(pid_t parent);

// The process holding the socket that listens on 127.0.0.1/0.0.0.0/[::]:`port`, when /proc lets
// this process see it.
std::optional<pid_t> find_listener_pid(uint16_t port);

}  // namespace rolter::bench::overhead
