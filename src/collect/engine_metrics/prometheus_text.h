// Prometheus text exposition, read just far enough to sum the samples of a named metric (SPEC
// §6.15: an engine's GET /metrics, e.g. vLLM's vllm:num_requests_running).
//
// Reads the text format (0.0.4, and the same sample lines of OpenMetrics). A line is one of:
//   blank, or a comment: '#' first (# HELP, # TYPE, # EOF, anything else), skipped;
//   a sample: name [{label="value",...}] value [timestamp] [# exemplar]
// Blanks and tabs separate tokens; a trailing '\r' is ignored. Label values may hold escaped
// quotes, backslashes and newlines (\" \\ \n), and '{', '}', ',', '#' and blanks unescaped.
// Values are floats as Prometheus writes them: NaN, +Inf and -Inf included. Every series of a
// name is summed, whatever its labels: vLLM exports one gauge per model_name. Metric names in
// the UTF-8 quoted form ({"name",...}) are not read: such lines never match.
//
//   std::optional<double> running = sum_samples(body, "vllm:num_requests_running");
//
// Never throws, allocates nothing, and reads only inside `text`.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string_view>

namespace rolter {

// The sum of every sample of metric `name` in `text`; nullopt when there is none, or when one of
// its sample lines cannot be read (a partial sum would understate what the engine reports). A
// NaN sample makes the sum NaN: the caller decides what a non-finite value means.
std::optional<double> sum_samples(std::string_view text, std::string_view name);

}  // namespace rolter
