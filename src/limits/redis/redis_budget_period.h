// Budget periods for the Redis backend's keys: the id that names a period's spend key and the
// instant the period ends, both in UTC (SPEC §15: days start at midnight, weeks on Monday
// midnight, months on the 1st).
//
//   redis_budget_period_id(ms, BudgetPeriod::kWeek)  -> "w20240603" (the Monday)
//   redis_budget_period_end_ms(ms, BudgetPeriod::kMonth) -> the next 1st, 00:00 UTC
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "limits/limit_types.h"

namespace rolter {

// "dYYYYMMDD" for a day, "wYYYYMMDD" of the week's Monday, "mYYYYMM" for a month.
std::string redis_budget_period_id(int64_t unix_ms, BudgetPeriod period);

// The unix ms at which the period holding `unix_ms` ends (the next period's start).
int64_t redis_budget_period_end_ms(int64_t unix_ms, BudgetPeriod period);

}  // namespace rolter
