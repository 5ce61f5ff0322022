#include "limits/budget_period.h"

#include <chrono>
#include <cmath>
#include <limits>

namespace rolter {
namespace {

namespace chr = std::chrono;
constexpr int64_t kDayMs = 86'400'000;

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

chr::sys_days day_of(int64_t now_ms) { return chr::sys_days(chr::days(floor_div(now_ms, kDayMs))); }

int64_t ms_of(chr::sys_days day) {
  return static_cast<int64_t>(day.time_since_epoch().count()) * kDayMs;
}

chr::sys_days week_start(chr::sys_days day) {
  // iso_encoding(): Monday = 1 ... Sunday = 7.
  return day - chr::days(chr::weekday(day).iso_encoding() - 1);
}

// Writes `value` as exactly `width` digits.
void put_digits(PeriodId& id, unsigned value, int width) {
  for (int i = width - 1; i >= 0; --i) {
    id.text[id.size + i] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
  id.size = static_cast<uint8_t>(id.size + width);
}

}  // namespace

PeriodBounds period_bounds(BudgetPeriod period, int64_t now_ms) {
  const chr::sys_days day = day_of(now_ms);
  switch (period) {
    case BudgetPeriod::kDay:
      return {ms_of(day), ms_of(day + chr::days(1))};
    case BudgetPeriod::kWeek: {
      const chr::sys_days monday = week_start(day);
      return {ms_of(monday), ms_of(monday + chr::days(7))};
    }
    case BudgetPeriod::kMonth:
      break;
  }
  const chr::year_month ym = chr::year_month_day(day).year() / chr::year_month_day(day).month();
  const chr::year_month next = ym + chr::months(1);
  return {ms_of(chr::sys_days(ym / 1)), ms_of(chr::sys_days(next / 1))};
}

PeriodId period_id(BudgetPeriod period, int64_t now_ms) {
  PeriodId id;
  chr::sys_days day = day_of(now_ms);
  if (period == BudgetPeriod::kWeek) day = week_start(day);
  const chr::year_month_day ymd(day);
  id.text[id.size++] = period == BudgetPeriod::kDay    ? 'd'
                       : period == BudgetPeriod::kWeek ? 'w'
                                                       : 'm';
  // Years before 0 or after 9999 do not occur on a wall clock; they print modulo 10000.
  put_digits(id, static_cast<unsigned>(static_cast<int>(ymd.year())) % 10000, 4);
  put_digits(id, static_cast<unsigned>(ymd.month()), 2);
  if (period != BudgetPeriod::kMonth) put_digits(id, static_cast<unsigned>(ymd.day()), 2);
  return id;
}

int64_t usd_to_nanos(double usd) {
  if (!(usd > 0)) return 0;
  const double nanos = std::round(usd * 1e9);
  if (nanos >= 9.2e18) return std::numeric_limits<int64_t>::max() / 2;
  return static_cast<int64_t>(nanos);
}

int64_t BudgetState::charged_nanos(BudgetPeriod period, int64_t now_ms) const {
  if (!counted_ || period != period_) return 0;
  return start_ms_ == period_bounds(period, now_ms).start_ms ? charged_nanos_ : 0;
}

bool BudgetState::allows(const BudgetSpec& spec, int64_t demand_nanos, int64_t now_ms) const {
  const int64_t budget = usd_to_nanos(spec.usd);
  if (budget <= 0) return false;
  const int64_t charged = charged_nanos(spec.period, now_ms);
  return charged <= budget && demand_nanos <= budget - charged;
}

void BudgetState::charge(BudgetPeriod period, int64_t nanos, int64_t now_ms) {
  const int64_t start = period_bounds(period, now_ms).start_ms;
  if (!counted_ || period != period_ || start != start_ms_) {
    period_ = period;
    start_ms_ = start;
    charged_nanos_ = 0;
    counted_ = true;
  }
  charged_nanos_ += nanos;
}

void BudgetState::settle(BudgetPeriod period, int64_t delta_nanos, int64_t at_ms) {
  if (!counted_ || period != period_ || start_ms_ != period_bounds(period, at_ms).start_ms) return;
  charged_nanos_ += delta_nanos;
  if (charged_nanos_ < 0) charged_nanos_ = 0;
}

}  // namespace rolter
