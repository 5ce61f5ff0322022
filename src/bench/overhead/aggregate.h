// Turns per-round figures into the report's: "added" latency (a path's percentile minus
// direct's, from the same round, so drift between rounds cancels) and the median over rounds of
// every figure (errors are summed: one error in any round is an error).
//
// Thread-safety: pure functions.
#pragma once

#include <vector>

#include "bench/overhead/result.h"

namespace rolter::bench::overhead {

// Fills added_latency and added_ttft of every round of every path from paths[direct_index].
void compute_added(std::vector<PathResult>& paths, size_t direct_index);

// The median over rounds of each figure; errors summed; probes left empty.
Figures median_figures(const std::vector<Figures>& rounds);

// Median of `values` (mean of the middle two for an even count); 0 when empty.
double median(std::vector<double> values);

}  // namespace rolter::bench::overhead
