// Turns per-round figures into the report's: "added" latency (a path's percentile minus
// direct's, from the same round, so drift between rounds cancels) and the median over rounds of
// every figure (errors are summed: one error in any round is an error).
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <vector>

#include "bench/overhead/result.h"

namespace rolter::bench::overhead {

// Fills added_latency and added_ttft of every round of every path from paths[direct_index].
void compute_added(std::vector<PathResult>& paths, size_t direct_index);

// The median over rounds of each figure; errors summed; probes left empty.
Figures median_figures(const std::vector<Figures>& rounds);

// Median of `values` (mean of the middle two for an even count); 0 when empty.
double median(std::vector<double> values);

// A path's figure over another path's in the same round, over the rounds where both have it.
// Pairing by round cancels the machine's drift between rounds, which a ratio of medians keeps.
struct SameRoundRatio {
  double median = 0, min = 0, max = 0;
  size_t rounds = 0;  // how many rounds gave a ratio
};

// `pick(path's round i) / pick(base's round i)` for every round i both measured; a round where
// either figure is missing, or base's is not positive, is left out. nullopt when none is left.
std::optional<SameRoundRatio> same_round_ratio(const PathResult& path, const PathResult& base,
                                               std::optional<double> (*pick)(const Figures&));

}  // namespace rolter::bench::overhead
