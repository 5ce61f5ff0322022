#include "bench/overhead/proc_stats.h"

#include <dirent.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <sstream>
#include <string>

namespace rolter::bench::overhead {
namespace {

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

template <typename T>
bool to_number(std::string_view s, T& out, int base = 10) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
  return ec == std::errc() && p == s.data() + s.size();
}

// Splits on runs of blanks.
std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

std::vector<pid_t> all_pids() {
  std::vector<pid_t> out;
  DIR* d = ::opendir("/proc");
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    pid_t pid = 0;
    if (to_number(std::string_view(e->d_name), pid) && pid > 0) out.push_back(pid);
  }
  ::closedir(d);
  return out;
}

bool holds_socket(pid_t pid, const std::string& link) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* d = ::opendir(dir.c_str());
  if (!d) return false;
  bool found = false;
  char target[128];
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const std::string fd = dir + "/" + e->d_name;
    const ssize_t n = ::readlink(fd.c_str(), target, sizeof target);
    if (n > 0 && std::string_view(target, static_cast<size_t>(n)) == link) {
      found = true;
      break;
    }
  }
  ::closedir(d);
  return found;
}

}  // namespace

std::optional<CpuTicks> parse_stat(std::string_view text) {
  const auto close = text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  // After ')': state(3) ppid(4) pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt
  // utime(14) stime(15).
  const auto f = fields(text.substr(close + 1));
  if (f.size() < 13) return std::nullopt;
  CpuTicks t;
  if (!to_number(f[1], t.ppid) || !to_number(f[11], t.utime) || !to_number(f[12], t.stime)) {
    return std::nullopt;
  }
  return t;
}

std::optional<MemoryKb> parse_status(std::string_view text) {
  MemoryKb m;
  bool have_rss = false;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    const bool rss = line.rfind("VmRSS:", 0) == 0;
    const bool hwm = line.rfind("VmHWM:", 0) == 0;
    if (!rss && !hwm) continue;
    const auto f = fields(line.substr(6));
    uint64_t kb = 0;
    if (f.empty() || !to_number(f[0], kb)) return std::nullopt;
    (rss ? m.rss_kb : m.hwm_kb) = kb;
    have_rss |= rss;
  }
  if (!have_rss) return std::nullopt;
  return m;
}

std::optional<uint64_t> parse_listen_inode(std::string_view net_tcp, uint16_t port) {
  size_t start = net_tcp.find('\n');  // skip the header line
  while (start != std::string_view::npos && start < net_tcp.size()) {
    size_t end = net_tcp.find('\n', start + 1);
    const std::string_view line = net_tcp.substr(
        start + 1, end == std::string_view::npos ? std::string_view::npos : end - start - 1);
    start = end;
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
    const auto f = fields(line);
    if (f.size() < 10 || f[3] != "0A") continue;
    const auto colon = f[1].rfind(':');
    uint16_t local_port = 0;
    if (colon == std::string_view::npos || !to_number(f[1].substr(colon + 1), local_port, 16))
      continue;
    uint64_t inode = 0;
    if (local_port == port && to_number(f[9], inode) && inode != 0) return inode;
  }
  return std::nullopt;
}

std::optional<double> read_cpu_seconds(const std::vector<pid_t>& pids) {
  if (pids.empty()) return std::nullopt;
  uint64_t ticks = 0;
  for (pid_t pid : pids) {
    auto text = read_text("/proc/" + std::to_string(pid) + "/stat");
    auto t = text ? parse_stat(*text) : std::nullopt;
    if (!t) return std::nullopt;
    ticks += t->utime + t->stime;
  }
  return static_cast<double>(ticks) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

std::optional<MemoryKb> read_memory(const std::vector<pid_t>& pids) {
  if (pids.empty()) return std::nullopt;
  MemoryKb sum;
  for (pid_t pid : pids) {
    auto text = read_text("/proc/" + std::to_string(pid) + "/status");
    auto m = text ? parse_status(*text) : std::nullopt;
    if (!m) return std::nullopt;
    sum.rss_kb += m->rss_kb;
    sum.hwm_kb += m->hwm_kb;
  }
  return sum;
}

std::vector<pid_t> find_children(pid_t parent) {
  std::vector<pid_t> out;
  for (pid_t pid : all_pids()) {
    auto text = read_text("/proc/" + std::to_string(pid) + "/stat");
    auto t = text ? parse_stat(*text) : std::nullopt;
    if (t && t->ppid == parent) out.push_back(pid);
  }
  return out;
}

std::optional<pid_t> find_listener_pid(uint16_t port) {
  std::optional<uint64_t> inode;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    if (auto text = read_text(table)) inode = parse_listen_inode(*text, port);
    if (inode) break;
  }
  if (!inode) return std::nullopt;
  const std::string link = "socket:[" + std::to_string(*inode) + "]";
  for (pid_t pid : all_pids()) {
    if (holds_socket(pid, link)) return pid;
  }
  return std::nullopt;
}

}  // namespace rolter::bench::overhead
