// The JSON of a batch of usage rows, as a gateway node posts it to the control plane's
// POST /internal/v1/usage:
//
//   {"rows": [{"hour_ms": 1767225600000, "key": "ci", "team": "ml", "route": "qwen3",
//              "model": "Qwen/Qwen3-8B", "requests": 3, "input_tokens": 2400,
//              "cached_input_tokens": 1024, "output_tokens": 180, "usd": 0.00042,
//              "estimated": 0}, ...]}
//
// The reader checks what a node could get wrong or a stranger could send: hours on an hour's
// boundary, counters that are unsigned integers, cached input within input, estimated within
// requests, a finite non-negative usd, names of at most kMaxUsageNameBytes, at most kMaxUsageRows
// rows. It never throws.
//
// Thread-safety: free functions without shared state.
#pragma once

#include <tl/expected.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "usage/usage_ledger.h"

namespace rolter {

// A key, team, route or model name longer than this is refused: names are config identifiers.
inline constexpr size_t kMaxUsageNameBytes = 256;
// Rows in one batch: a node holds at most this many between flushes (its flusher's bound).
inline constexpr size_t kMaxUsageRows = 20'000;

std::string usage_rows_json(const std::vector<UsageRow>& rows);

// The rows of a batch; the error names the first field that is wrong, e.g. "rows[3].hour_ms: ...".
tl::expected<std::vector<UsageRow>, std::string> parse_usage_rows(std::string_view text);

}  // namespace rolter
