// The query of GET /api/v1/usage (SPEC §15), read from its parameters, and its answer's JSON.
//
//   from, to    unix ms (digits) or a UTC date or time: 2026-01-01, 2026-01-01T10:00:00Z.
//               Usage is kept per hour: the hour holding `from` counts, `to` is exclusive.
//               Absent: from the beginning, to the end.
//   key, team, route   exact names; absent = all
//   group_by    a comma-separated list of model, route, key, team, day, hour (day and hour are
//               UTC; at most one of them); absent = one total
//
// Thread-safety: free functions without shared state.
#pragma once

#include <nlohmann/json.hpp>
#include <tl/expected.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "control/control_plane.h"
#include "store/store.h"

namespace rolter {

// Unix ms from digits or an ISO 8601 UTC date ("YYYY-MM-DD") or time ("YYYY-MM-DDTHH:MM:SSZ").
std::optional<int64_t> parse_usage_instant(std::string_view text);

// `param(name)` is the decoded value of a query parameter, "" when absent. The error names the
// parameter in `param`.
tl::expected<UsageQuery, ControlError> parse_usage_query(
    const std::function<std::string(std::string_view)>& param);

// {"object": "list", "from_ms", "to_ms", "group_by": [...], "data": [{grouped fields...,
// requests, input_tokens, cached_input_tokens, output_tokens, usd, estimated}], "totals": {...}}.
// A day reads "2026-01-01", an hour "2026-01-01T10:00:00Z", each with its "start_ms".
nlohmann::json usage_answer(const UsageQuery& query, const std::vector<UsageRow>& rows);

}  // namespace rolter
