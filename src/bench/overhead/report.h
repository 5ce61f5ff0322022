// Renders an OverheadReport: JSON for machines, Markdown tables for people (latency, then
// throughput and resources, then the context: machine, commit, command, load generators,
// workers, notes), and an SVG chart (added latency p50/p99 per path, and throughput at c=32
// relative to direct).
//
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "bench/overhead/result.h"

namespace rolter::bench::overhead {

std::string render_json(const OverheadReport& report);
std::string render_markdown(const OverheadReport& report);
std::string render_svg(const OverheadReport& report);

}  // namespace rolter::bench::overhead
