// Budget periods and a scope's budget (SPEC §15): the UTC day, ISO week (from Monday 00:00) or
// calendar month containing an instant, its compact id, and the spend counted in it.
//
//   period_bounds(kDay,   2026-12-04T15:00Z) = [2026-12-04T00:00Z, 2026-12-05T00:00Z)
//   period_bounds(kWeek,  same)              = [2026-11-30T00:00Z, 2026-12-07T00:00Z)  (a Monday)
//   period_bounds(kMonth, same)              = [2026-12-01T00:00Z, 2027-01-01T00:00Z)
//   period_id: "d20261204", "w20261130" (the Monday), "m202612"; the Redis key's suffix.
//
// Money is counted in whole nano-dollars (usd_to_nanos: round half away from zero of usd * 1e9),
// so sums are exact and a backend counting with HINCRBY agrees to the nano-dollar.
//
// BudgetState semantics: one number, `charged` = reservations + settled corrections, in the period
// it was counted in. A period other than the one containing `now` (a new period, or a reload that
// changed the period kind) counts as zero.
//   Admission: passes iff budget > 0 and charged + demand <= budget (a budget of 0 refuses all).
//   Reservation: charged += demand.
//   Settlement: charged += actual - demand, floored at zero, iff the state still counts the period
//   containing the admission's at_ms; otherwise dropped.
//   retry_after: until the period ends.
//
// Thread-safety: functions are pure; BudgetState is a value type whose owner serializes access.
#pragma once

#include <cstdint>
#include <string_view>

#include "limits/limit_types.h"

namespace rolter {

struct PeriodBounds {
  int64_t start_ms = 0;  // inclusive
  int64_t end_ms = 0;    // exclusive
};

PeriodBounds period_bounds(BudgetPeriod period, int64_t now_ms);

// An allocation-free id: "d20261204" / "w20261130" / "m202612".
struct PeriodId {
  char text[16] = {};
  uint8_t size = 0;
  std::string_view view() const { return {text, size}; }
};

PeriodId period_id(BudgetPeriod period, int64_t now_ms);

// usd * 1e9 rounded half away from zero; negative and NaN give 0; saturates near 9.2e9 USD.
int64_t usd_to_nanos(double usd);

class BudgetState {
 public:
  // The charge counted in the period containing now_ms.
  int64_t charged_nanos(BudgetPeriod period, int64_t now_ms) const;

  bool allows(const BudgetSpec& spec, int64_t demand_nanos, int64_t now_ms) const;
  static int64_t retry_after_ms(const BudgetSpec& spec, int64_t now_ms) {
    return period_bounds(spec.period, now_ms).end_ms - now_ms;
  }
  void charge(BudgetPeriod period, int64_t nanos, int64_t now_ms);
  // `at_ms` is when the reservation counted (Admission::at_ms).
  void settle(BudgetPeriod period, int64_t delta_nanos, int64_t at_ms);

 private:
  BudgetPeriod period_ = BudgetPeriod::kMonth;
  int64_t start_ms_ = 0;
  bool counted_ = false;  // false: nothing was ever charged
  int64_t charged_nanos_ = 0;
};

}  // namespace rolter
