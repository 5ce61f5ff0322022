// Renders a ReplayReport: JSON for machines, a Markdown table for people, and an SVG bar chart
// (hit ratio, TTFT p99 and ITL p99 per run), with a per-tenant table (sent, served, shed, TTFT) when
// the replay had --tenants. Also gathers the context every report carries: the
// machine, the commit and the command line.
//
// Thread-safety: pure functions, except that machine_description() and current_commit() read
// /proc and run git.
#pragma once

#include <string>
#include <string_view>

#include "bench/replay_result.h"

namespace rolter::bench {

// `v` with `digits` digits after the point ("%.*f").
std::string fixed(double v, int digits);
// `s` escaped for XML text and attribute values (the SVG charts' labels).
std::string xml(std::string_view s);

// "2 cores, Intel(R) Xeon(R) ..." from /proc/cpuinfo.
std::string machine_description();

// `git rev-parse HEAD` in the current directory, or "unknown".
std::string current_commit();

// argv joined with spaces, each argument shell-quoted when it needs it.
std::string command_line(int argc, char** argv);

std::string render_json(const ReplayReport& report);
std::string render_markdown(const ReplayReport& report);
std::string render_svg(const ReplayReport& report);

// Writes a report to `path`. On failure prints "<program>: cannot write <path>" to stderr and
// returns false.
bool write_report_file(const std::string& path, const std::string& text, const char* program);

}  // namespace rolter::bench
