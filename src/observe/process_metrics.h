// Process metrics: the standard process_* series every Prometheus client library exports, read
// from /proc at scrape time (Linux only):
//   process_cpu_seconds_total       user + system CPU time
//   process_resident_memory_bytes   resident set size
//   process_virtual_memory_bytes    virtual memory size
//   process_open_fds                open file descriptors
//   process_max_fds                 the open-file limit (soft RLIMIT_NOFILE)
//   process_start_time_seconds      when the process started, in seconds since the Unix epoch
// A value that cannot be read is left out; the others still are.
//
//   for (auto& family : collect_process_metrics()) families.push_back(std::move(family));
//
// Thread-safety: the functions may be called from any thread, concurrently.
#pragma once

#include <prometheus/metric_family.h>

#include <optional>
#include <string_view>
#include <vector>

namespace rolter {

// What /proc/self/stat says, in the units of the metrics.
struct ProcStat {
  double cpu_seconds = 0;
  double resident_bytes = 0;
  double virtual_bytes = 0;
  double start_seconds_after_boot = 0;
};

// Reads the text of /proc/<pid>/stat: utime and stime (fields 14, 15), starttime (22), vsize (23)
// and rss (24), counted after the command name's closing parenthesis (the name may hold spaces
// and parentheses). nullopt when a field is missing or not a number.
std::optional<ProcStat> parse_proc_stat(std::string_view text, long ticks_per_second,
                                        long page_size);

// The boot time (the "btime" line of /proc/stat), in seconds since the Unix epoch.
std::optional<double> parse_boot_time(std::string_view proc_stat);

// The process_* families, now.
std::vector<prometheus::MetricFamily> collect_process_metrics();

}  // namespace rolter
