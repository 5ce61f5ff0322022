// Percentiles of latency samples.
//
// Thread-safety: pure function.
#pragma once

#include <vector>

namespace rolter::bench {

// The p-th percentile (0 <= p <= 100) with linear interpolation between the two closest ranks
// (numpy's default), so p50 of {1, 2, 3, 4} is 2.5. Returns 0 for no samples. Sorts `samples`.
double percentile(std::vector<double>& samples, double p);

}  // namespace rolter::bench
