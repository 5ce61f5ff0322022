#include "limits/redis/redis_limiter.h"

#include <algorithm>
#include <cstdio>

#include "limits/redis/redis_budget_period.h"
#include "limits/redis/redis_scripts.h"

namespace rolter {
namespace {

// Limit codes in the admission script's reply.
constexpr int64_t kLimitRpm = 1;
constexpr int64_t kLimitTpm = 2;
constexpr int64_t kLimitInFlight = 3;
constexpr int64_t kLimitBudget = 4;
constexpr size_t kAdmitHead = 5;     // admitted, now, refusing rule, refusing limit, retry after
constexpr size_t kAdmitPerRule = 4;  // requests remaining/reset, tokens remaining/reset
// A period's spend key outlives the period by a day: late settlements still find it, and clocks
// of the nodes may disagree a little on when the period ended.
constexpr int64_t kBudgetKeyGraceMs = 24 * 3600 * 1000;
// Retry-After when the backend is away and the policy is closed: the backoff's first steps.
constexpr int64_t kUnavailableRetryMs = 1000;

const RedisScript& admit_script() {
  static const RedisScript script{std::string(redis_scripts::kAdmit)};
  return script;
}

const RedisScript& settle_script() {
  static const RedisScript script{std::string(redis_scripts::kSettle)};
  return script;
}

int64_t system_clock_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string format_usd(double usd) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", usd);
  return text;
}

std::string rule_key(const std::string& prefix, const LimitRule& rule, std::string_view suffix) {
  std::string key;
  key.reserve(prefix.size() + rule.id.size() + 3 + suffix.size());
  key.append(prefix).append("{").append(rule.id).append("}:").append(suffix);
  return key;
}

std::string budget_key(const std::string& prefix, const LimitRule& rule, int64_t at_ms) {
  const BudgetPeriod period = rule.spec.budget ? rule.spec.budget->period : BudgetPeriod::kMonth;
  return rule_key(prefix, rule, "budget:" + redis_budget_period_id(at_ms, period));
}

const char* period_name(BudgetPeriod period) {
  switch (period) {
    case BudgetPeriod::kDay:
      return "day";
    case BudgetPeriod::kWeek:
      return "week";
    case BudgetPeriod::kMonth:
      return "month";
  }
  return "period";
}

// "key 'a': 60 requests per minute"
std::string refusal_message(const LimitRule& rule, int64_t limit) {
  char text[96];
  const LimitSpec& spec = rule.spec;
  switch (limit) {
    case kLimitRpm:
      std::snprintf(text, sizeof text, "%llu requests per minute",
                    static_cast<unsigned long long>(spec.rpm));
      break;
    case kLimitTpm:
      std::snprintf(text, sizeof text, "%llu tokens per minute",
                    static_cast<unsigned long long>(spec.tpm));
      break;
    case kLimitInFlight:
      std::snprintf(text, sizeof text, "%u requests in flight", spec.max_in_flight);
      break;
    default:
      std::snprintf(text, sizeof text, "budget of $%.2f per %s",
                    spec.budget ? spec.budget->usd : 0.0,
                    period_name(spec.budget ? spec.budget->period : BudgetPeriod::kMonth));
      break;
  }
  return rule.label + ": " + text;
}

// The smaller of the rule's remaining fractions: lower is more restrictive.
double remaining_fraction(const LimitReading& r) {
  double fraction = 1;
  if (r.request_quota != 0) {
    fraction = std::min(
        fraction, static_cast<double>(r.requests_remaining) / static_cast<double>(r.request_quota));
  }
  if (r.token_quota != 0) {
    fraction = std::min(
        fraction, static_cast<double>(r.tokens_remaining) / static_cast<double>(r.token_quota));
  }
  return fraction;
}

bool all_integers(const RedisReply& reply, size_t count) {
  if (reply.type != RedisReply::Type::kArray || reply.elements.size() != count) return false;
  return std::all_of(reply.elements.begin(), reply.elements.end(),
                     [](const RedisReply& e) { return e.type == RedisReply::Type::kInteger; });
}

// The admission script's reply turned into an Admission. REQUIRES: all_integers(reply, ...).
Admission read_admission(const RedisReply& reply, std::span<const LimitRule* const> rules) {
  const auto at = [&](size_t i) { return reply.elements[i].integer; };
  Admission admission;
  admission.at_ms = at(1);
  const int64_t refusing_rule = at(2);
  if (at(0) != 1 && refusing_rule >= 1 && static_cast<size_t>(refusing_rule) <= rules.size()) {
    const LimitRule& rule = *rules[refusing_rule - 1];
    admission.refusal = at(3) == kLimitBudget ? Refusal::kBudget : Refusal::kRateLimit;
    admission.retry_after_ms = at(4);
    admission.message = refusal_message(rule, at(3));
  }
  LimitReading readings[Limiter::kMaxRules];
  size_t count = 0;
  for (size_t i = 0; i < rules.size() && count < Limiter::kMaxRules; ++i) {
    const LimitSpec& spec = rules[i]->spec;
    if (spec.rpm == 0 && spec.tpm == 0) continue;
    const size_t base = kAdmitHead + i * kAdmitPerRule;
    LimitReading& r = readings[count++];
    r.rule = rules[i];
    if (spec.rpm != 0) {
      r.request_quota = spec.effective_burst();
      r.requests_remaining = static_cast<uint64_t>(std::max<int64_t>(0, at(base)));
      r.requests_reset_ms = at(base + 1);
    }
    if (spec.tpm != 0) {
      r.token_quota = spec.tpm;
      r.tokens_remaining = static_cast<uint64_t>(std::max<int64_t>(0, at(base + 2)));
      r.tokens_reset_ms = at(base + 3);
    }
  }
  std::stable_sort(readings, readings + count, [](const LimitReading& a, const LimitReading& b) {
    return remaining_fraction(a) < remaining_fraction(b);
  });
  admission.reading_count = std::min(count, Admission::kMaxReadings);
  std::copy_n(readings, admission.reading_count, admission.readings);
  return admission;
}

}  // namespace

RedisLimiter::RedisLimiter(asio::any_io_executor executor, RedisLimiterOptions options,
                           Random& random, std::function<int64_t()> wall_clock_ms)
    : options_(std::move(options)),
      wall_clock_ms_(wall_clock_ms ? std::move(wall_clock_ms) : system_clock_ms),
      client_(std::move(executor), options_.connection, {&admit_script(), &settle_script()},
              random) {}

Admission RedisLimiter::backend_error(int64_t now_ms) const {
  counters_->backend_errors.fetch_add(1, std::memory_order_relaxed);
  Admission admission;
  admission.backend_error = true;
  admission.at_ms = now_ms;
  if (options_.on_backend_error == BackendErrorPolicy::kClosed) {
    admission.refusal = Refusal::kUnavailable;
    admission.retry_after_ms = kUnavailableRetryMs;
    admission.message = "the limits backend is unavailable";
  }
  return admission;
}

Task<Admission> RedisLimiter::admit(std::span<const LimitRule* const> rules, const Demand& demand) {
  const int64_t node_ms = wall_clock_ms_();
  std::vector<std::string> keys;
  std::vector<std::string> args;
  keys.reserve(rules.size() * 4);
  args.reserve(5 + rules.size() * 8);
  args.push_back(std::to_string(rules.size()));
  args.push_back(std::to_string(demand.tokens));
  args.push_back(format_usd(demand.usd));
  args.push_back(demand.request_id);
  args.push_back(std::to_string(demand.lease_ms));
  for (const LimitRule* rule : rules) {
    const LimitSpec& spec = rule->spec;
    keys.push_back(rule_key(options_.key_prefix, *rule, "gcra"));
    keys.push_back(rule_key(options_.key_prefix, *rule, "tpm"));
    keys.push_back(rule_key(options_.key_prefix, *rule, "inflight"));
    keys.push_back(budget_key(options_.key_prefix, *rule, node_ms));
    const int64_t period_end =
        spec.budget ? redis_budget_period_end_ms(node_ms, spec.budget->period) : 0;
    args.push_back(std::to_string(spec.rpm));
    args.push_back(std::to_string(spec.rpm != 0 ? spec.effective_burst() : 0));
    args.push_back(std::to_string(spec.tpm));
    args.push_back(std::to_string(spec.max_in_flight));
    args.push_back(spec.budget ? "1" : "0");
    args.push_back(format_usd(spec.budget ? spec.budget->usd : 0));
    args.push_back(std::to_string(period_end + kBudgetKeyGraceMs));
    args.push_back(std::to_string(period_end));
  }
  std::vector<std::string_view> key_views(keys.begin(), keys.end());
  std::vector<std::string_view> arg_views(args.begin(), args.end());
  RedisResult result = co_await client_.eval(admit_script(), key_views, arg_views);
  if (!result.ok() || !all_integers(result.reply, kAdmitHead + kAdmitPerRule * rules.size())) {
    co_return backend_error(node_ms);
  }
  co_return read_admission(result.reply, rules);
}

void RedisLimiter::settle(std::span<const LimitRule* const> rules, const Demand& demand,
                          const Admission& admission, const Settlement& settlement) {
  // Nothing was reserved for a refused request, nor by an admission the backend never saw.
  if (!admission.admitted() || admission.backend_error) return;
  const int64_t token_delta = settlement.estimated ? 0
                                                   : static_cast<int64_t>(settlement.tokens) -
                                                         static_cast<int64_t>(demand.tokens);
  const double usd_delta = settlement.estimated ? 0 : settlement.usd - demand.usd;
  std::vector<std::string> keys;
  std::vector<std::string> args;
  keys.reserve(rules.size() * 3);
  args.reserve(5 + rules.size() * 4);
  args.push_back(std::to_string(rules.size()));
  args.push_back(std::to_string(token_delta));
  args.push_back(format_usd(usd_delta));
  args.push_back(demand.request_id);
  args.push_back(std::to_string(admission.at_ms));
  bool work = false;
  for (const LimitRule* rule : rules) {
    const LimitSpec& spec = rule->spec;
    // The admission named the period from this node's clock, which agrees with Redis's at_ms but
    // for a skew straddling a period's end.
    keys.push_back(rule_key(options_.key_prefix, *rule, "tpm"));
    keys.push_back(rule_key(options_.key_prefix, *rule, "inflight"));
    keys.push_back(budget_key(options_.key_prefix, *rule, admission.at_ms));
    const bool tpm = spec.tpm != 0 && token_delta != 0;
    const bool in_flight = spec.max_in_flight != 0;
    const bool budget = spec.budget.has_value() && usd_delta != 0;
    work = work || tpm || in_flight || budget;
    args.push_back(tpm ? "1" : "0");
    args.push_back(in_flight ? "1" : "0");
    args.push_back(budget ? "1" : "0");
    const int64_t period_end =
        budget ? redis_budget_period_end_ms(admission.at_ms, spec.budget->period) : 0;
    args.push_back(std::to_string(period_end + kBudgetKeyGraceMs));
  }
  if (!work) return;  // the reservation is the charge: no round trip
  client_.eval_detached(settle_script(), std::move(keys), std::move(args),
                        [counters = counters_](const RedisResult& result) {
                          if (result.ok()) {
                            counters->settlements.fetch_add(1, std::memory_order_relaxed);
                          } else {
                            counters->backend_errors.fetch_add(1, std::memory_order_relaxed);
                          }
                        });
}

}  // namespace rolter
