#include "limits/redis/redis_budget_period.h"

#include <chrono>
#include <cstdio>

namespace rolter {
namespace {

using std::chrono::days;
using std::chrono::milliseconds;
using std::chrono::sys_days;

// The first day of the period holding `unix_ms`.
sys_days period_start(int64_t unix_ms, BudgetPeriod period) {
  const auto day =
      std::chrono::floor<days>(std::chrono::sys_time<milliseconds>(milliseconds(unix_ms)));
  switch (period) {
    case BudgetPeriod::kDay:
      return day;
    case BudgetPeriod::kWeek:
      return day - (std::chrono::weekday(day) - std::chrono::Monday);
    case BudgetPeriod::kMonth: {
      const std::chrono::year_month_day ymd(day);
      return sys_days(ymd.year() / ymd.month() / 1);
    }
  }
  return day;
}

}  // namespace

std::string redis_budget_period_id(int64_t unix_ms, BudgetPeriod period) {
  const std::chrono::year_month_day ymd(period_start(unix_ms, period));
  char text[16];
  const int y = static_cast<int>(ymd.year());
  const unsigned m = static_cast<unsigned>(ymd.month());
  const unsigned d = static_cast<unsigned>(ymd.day());
  if (period == BudgetPeriod::kMonth) {
    std::snprintf(text, sizeof text, "m%04d%02u", y, m);
  } else {
    std::snprintf(text, sizeof text, "%c%04d%02u%02u", period == BudgetPeriod::kDay ? 'd' : 'w', y,
                  m, d);
  }
  return text;
}

int64_t redis_budget_period_end_ms(int64_t unix_ms, BudgetPeriod period) {
  const sys_days start = period_start(unix_ms, period);
  sys_days end = start + days(1);
  if (period == BudgetPeriod::kWeek) end = start + days(7);
  if (period == BudgetPeriod::kMonth) {
    const std::chrono::year_month_day ymd(start);
    end = sys_days((ymd.year() / ymd.month() / 1) + std::chrono::months(1));
  }
  return std::chrono::duration_cast<milliseconds>(end.time_since_epoch()).count();
}

}  // namespace rolter
