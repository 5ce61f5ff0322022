// `rolter policy-thresholds`: the table of session flip thresholds for policy mode (SPEC §7), so
// an operator can choose the least_inflight : session_affinity weight ratio knowing how busy a
// session's engine may get before its conversation moves (balance/policy/flip_threshold.h).
//
// Parsing and rendering are plain functions of their inputs, for tests; run_policy_thresholds()
// ties them to stdout. Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <tl/expected.hpp>

#include "balance/policy/flip_threshold.h"

namespace rolter {

// The largest target count the command accepts: 2^-k past that is far below least_inflight's
// resolution, and the table would stop being readable.
inline constexpr size_t kMaxThresholdTargets = 64;

// The parsers' messages say what is wrong with the value; the caller names where it came from
// (the command's flag, the API's query parameter).

// "2..8" -> {2, ..., 8}; "4" -> {4}. Counts in [2, kMaxThresholdTargets].
tl::expected<std::vector<size_t>, std::string> parse_target_range(std::string_view text);

// "1:1,1.5:1,2:1" -> least_inflight:session_affinity ratios; each side finite and > 0.
tl::expected<std::vector<PolicyRatio>, std::string> parse_ratios(std::string_view text);

// "1.5:1": each side in its shortest form.
std::string ratio_label(const PolicyRatio& ratio);

// One row per target count, one cell per ratio, in the order given.
std::vector<std::vector<FlipThreshold>> compute_thresholds(const std::vector<size_t>& targets,
                                                           const std::vector<PolicyRatio>& ratios);

// The table: a header naming each ratio column, then one row per target count. A cell is the
// owner in-flight count at which a session moves, `never` when it stays up to 1000, and
// " (tie at k)" when from owner in-flight k on the pick is a coin flip.
std::string render_threshold_table(const std::vector<std::vector<FlipThreshold>>& rows);

// The same data as JSON: an array of {"targets", "ratio", "least_inflight_weight",
// "session_affinity_weight", "flip" (null = never), "tie_at" (null = none)}.
std::string render_threshold_json(const std::vector<std::vector<FlipThreshold>>& rows);

// Parses, computes and prints; returns the exit code (1 with a message on stderr for bad input).
int run_policy_thresholds(std::string_view targets, std::string_view ratios, bool json);

}  // namespace rolter
