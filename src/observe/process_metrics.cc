#include "observe/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <iterator>
#include <string>

namespace rolter {
namespace {

std::optional<std::string> read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::optional<double> to_number(std::string_view token) {
  double value = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (ec != std::errc() || end != token.data() + token.size()) return std::nullopt;
  return value;
}

// Descriptors open now: the entries of /proc/self/fd, less the one reading it.
std::optional<double> open_fds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return std::nullopt;
  double n = 0;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++n;
  }
  closedir(dir);
  return n - 1;
}

std::optional<double> max_fds() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) {
    return std::nullopt;
  }
  return static_cast<double>(limit.rlim_cur);
}

void add(std::vector<prometheus::MetricFamily>& out, const char* name, const char* help,
         prometheus::MetricType type, std::optional<double> value) {
  if (!value) return;
  prometheus::ClientMetric metric;
  if (type == prometheus::MetricType::Counter) {
    metric.counter.value = *value;
  } else {
    metric.gauge.value = *value;
  }
  out.push_back(prometheus::MetricFamily{
      .name = name, .help = help, .type = type, .metric = {std::move(metric)}});
}

}  // namespace

std::optional<ProcStat> parse_proc_stat(std::string_view text, long ticks_per_second,
                                        long page_size) {
  const size_t paren = text.rfind(')');
  if (paren == std::string_view::npos || ticks_per_second <= 0) return std::nullopt;
  // Fields from 3 (the state) on, split on blanks.
  std::optional<double> utime, stime, start, vsize, rss;
  size_t field = 2;
  size_t at = paren + 1;
  while (at < text.size() && field < 24) {
    while (at < text.size() && (text[at] == ' ' || text[at] == '\n')) ++at;
    const size_t end = std::min(text.find_first_of(" \n", at), text.size());
    if (end == at) break;
    ++field;
    const std::string_view token = text.substr(at, end - at);
    if (field == 14) utime = to_number(token);
    if (field == 15) stime = to_number(token);
    if (field == 22) start = to_number(token);
    if (field == 23) vsize = to_number(token);
    if (field == 24) rss = to_number(token);
    at = end;
  }
  if (!utime || !stime || !start || !vsize || !rss) return std::nullopt;
  const double ticks = static_cast<double>(ticks_per_second);
  return ProcStat{.cpu_seconds = (*utime + *stime) / ticks,
                  .resident_bytes = *rss * static_cast<double>(page_size),
                  .virtual_bytes = *vsize,
                  .start_seconds_after_boot = *start / ticks};
}

std::optional<double> parse_boot_time(std::string_view proc_stat) {
  constexpr std::string_view kKey = "btime ";
  size_t at = proc_stat.starts_with(kKey) ? 0 : proc_stat.find("\nbtime ");
  if (at == std::string_view::npos) return std::nullopt;
  at += at == 0 ? kKey.size() : kKey.size() + 1;
  const size_t end = std::min(proc_stat.find('\n', at), proc_stat.size());
  return to_number(proc_stat.substr(at, end - at));
}

std::vector<prometheus::MetricFamily> collect_process_metrics() {
  using prometheus::MetricType;
  // The boot time does not change while the process runs: /proc/stat is read once.
  static const std::optional<double> boot_time = [] {
    auto text = read_file("/proc/stat");
    return text ? parse_boot_time(*text) : std::nullopt;
  }();
  std::optional<ProcStat> stat;
  if (auto text = read_file("/proc/self/stat")) {
    stat = parse_proc_stat(*text, sysconf(_SC_CLK_TCK), sysconf(_SC_PAGESIZE));
  }
  auto field = [&](double ProcStat::*member) -> std::optional<double> {
    if (!stat) return std::nullopt;
    return (*stat).*member;
  };
  std::optional<double> start_time;
  if (stat && boot_time) start_time = *boot_time + stat->start_seconds_after_boot;

  std::vector<prometheus::MetricFamily> out;
  add(out, "process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
      MetricType::Counter, field(&ProcStat::cpu_seconds));
  add(out, "process_open_fds", "Number of open file descriptors.", MetricType::Gauge, open_fds());
  add(out, "process_max_fds", "Maximum number of open file descriptors.", MetricType::Gauge,
      max_fds());
  add(out, "process_virtual_memory_bytes", "Virtual memory size in bytes.", MetricType::Gauge,
      field(&ProcStat::virtual_bytes));
  add(out, "process_resident_memory_bytes", "Resident memory size in bytes.", MetricType::Gauge,
      field(&ProcStat::resident_bytes));
  add(out, "process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
      MetricType::Gauge, start_time);
  return out;
}

}  // namespace rolter
