#include "limits/local_limiter.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <chrono>
#include <cstdio>

namespace rolter {
namespace {

// The cells of one request's rules, locked in address order for the life of this object. Rules
// that share an id share a cell, locked once.
class LockedCells {
 public:
  LockedCells(std::span<const LimitRule* const> rules,
              LimitCells& registry) NO_THREAD_SAFETY_ANALYSIS
      : count_(std::min(rules.size(), Limiter::kMaxRules)) {
    for (size_t i = 0; i < count_; ++i) {
      cells_[i] = rules[i]->cell.get();
      if (cells_[i] == nullptr) {  // a rule built without its cell: look the id up
        owned_[i] = registry.cell(rules[i]->id);
        cells_[i] = owned_[i].get();
      }
      order_[i] = cells_[i];
    }
    std::sort(order_, order_ + count_);
    locked_ = static_cast<size_t>(std::unique(order_, order_ + count_) - order_);
    for (size_t i = 0; i < locked_; ++i) order_[i]->mu.lock();
  }
  ~LockedCells() NO_THREAD_SAFETY_ANALYSIS {
    for (size_t i = locked_; i > 0; --i) order_[i - 1]->mu.unlock();
  }
  LockedCells(const LockedCells&) = delete;
  LockedCells& operator=(const LockedCells&) = delete;

  size_t size() const { return count_; }
  LimitCell& operator[](size_t i) const { return *cells_[i]; }

 private:
  size_t count_;
  size_t locked_ = 0;
  LimitCell* cells_[Limiter::kMaxRules] = {};
  LimitCell* order_[Limiter::kMaxRules] = {};
  std::shared_ptr<LimitCell> owned_[Limiter::kMaxRules];
};

enum class Limit : uint8_t { kBudget, kRpm, kTpm, kTpmTooLarge, kInFlight };

// What the checks found: the first refusing limit, and the latest retry-after of them all.
struct Verdict {
  const LimitRule* rule = nullptr;  // null: everything passed so far
  Limit limit = Limit::kRpm;
  int64_t retry_after_ms = 0;

  void refuse(const LimitRule& r, Limit l, int64_t retry_ms) {
    if (rule == nullptr) {
      rule = &r;
      limit = l;
    }
    retry_after_ms = std::max(retry_after_ms, retry_ms);
  }
};

// The cell's mutex is held by LockedCells; the analysis cannot follow a lock taken in a loop.
void check_rule(const LimitRule& rule, const LimitCell& cell, const Demand& demand,
                int64_t demand_nanos, int64_t now_ms, TokenWindow::Summary& tokens,
                Verdict& verdict) NO_THREAD_SAFETY_ANALYSIS {
  const LimitSpec& spec = rule.spec;
  if (spec.budget && !cell.budget.allows(*spec.budget, demand_nanos, now_ms)) {
    verdict.refuse(rule, Limit::kBudget, BudgetState::retry_after_ms(*spec.budget, now_ms));
  }
  if (spec.rpm != 0 && !cell.gcra.allows(spec.rpm, spec.effective_burst(), now_ms)) {
    verdict.refuse(rule, Limit::kRpm,
                   cell.gcra.retry_after_ms(spec.rpm, spec.effective_burst(), now_ms));
  }
  if (spec.tpm != 0) {
    tokens = cell.tokens.summary(now_ms);
    if (!TokenWindow::allows(tokens, spec.tpm, demand.tokens)) {
      verdict.refuse(rule, demand.tokens > spec.tpm ? Limit::kTpmTooLarge : Limit::kTpm,
                     cell.tokens.retry_after_ms(spec.tpm, demand.tokens, now_ms));
    }
  }
  if (spec.max_in_flight != 0 && cell.in_flight >= spec.max_in_flight) {
    verdict.refuse(rule, Limit::kInFlight, LocalLimiter::kInFlightRetryMs);
  }
}

void reserve_rule(const LimitRule& rule, LimitCell& cell, const Demand& demand,
                  int64_t demand_nanos, int64_t now_ms,
                  TokenWindow::Summary& tokens) NO_THREAD_SAFETY_ANALYSIS {
  const LimitSpec& spec = rule.spec;
  if (spec.budget) cell.budget.charge(spec.budget->period, demand_nanos, now_ms);
  if (spec.rpm != 0) cell.gcra.take(spec.rpm, now_ms);
  if (spec.tpm != 0) {
    cell.tokens.reserve(demand.tokens, now_ms);
    tokens = TokenWindow::after_reserve(tokens, demand.tokens, now_ms);
  }
  if (spec.max_in_flight != 0) ++cell.in_flight;
}

void append_number(std::string& out, uint64_t value) {
  char buf[24];
  const auto end = std::to_chars(buf, buf + sizeof buf, value).ptr;
  out.append(buf, end);
}

std::string describe(const Verdict& v, const Demand& demand) {
  const LimitSpec& spec = v.rule->spec;
  std::string m = v.rule->label;
  m += ": ";
  switch (v.limit) {
    case Limit::kBudget: {
      char usd[32];
      std::snprintf(usd, sizeof usd, "%.6g", spec.budget->usd);
      static constexpr const char* kPer[] = {"day", "week", "month"};
      m += "budget of $";
      m += usd;
      m += " per ";
      m += kPer[static_cast<int>(spec.budget->period)];
      break;
    }
    case Limit::kRpm:
      append_number(m, spec.rpm);
      m += " requests per minute";
      break;
    case Limit::kTpmTooLarge:
      m += "the request's estimate of ";
      append_number(m, demand.tokens);
      m += " tokens exceeds ";
      [[fallthrough]];
    case Limit::kTpm:
      append_number(m, spec.tpm);
      m += " tokens per minute";
      break;
    case Limit::kInFlight:
      append_number(m, spec.max_in_flight);
      m += " requests in flight";
      break;
  }
  return m;
}

// The smallest remaining fraction of the reading's limits: how close the rule is to refusing.
double tightness(const LimitReading& r) {
  double f = 2;
  if (r.request_quota != 0) {
    f = std::min(f,
                 static_cast<double>(r.requests_remaining) / static_cast<double>(r.request_quota));
  }
  if (r.token_quota != 0) {
    f = std::min(f, static_cast<double>(r.tokens_remaining) / static_cast<double>(r.token_quota));
  }
  return f;
}

// Keeps the readings sorted by tightness, ties in rule order, at most kMaxReadings.
void add_reading(Admission& a, const LimitReading& r) {
  const double f = tightness(r);
  size_t pos = a.reading_count;
  while (pos > 0 && tightness(a.readings[pos - 1]) > f) --pos;
  if (pos >= Admission::kMaxReadings) return;
  const size_t last = std::min(a.reading_count, Admission::kMaxReadings - 1);
  for (size_t i = last; i > pos; --i) a.readings[i] = a.readings[i - 1];
  a.readings[pos] = r;
  if (a.reading_count < Admission::kMaxReadings) ++a.reading_count;
}

LimitReading read_rule(const LimitRule& rule, const LimitCell& cell,
                       const TokenWindow::Summary& tokens,
                       int64_t now_ms) NO_THREAD_SAFETY_ANALYSIS {
  const LimitSpec& spec = rule.spec;
  LimitReading r;
  r.rule = &rule;
  if (spec.rpm != 0) {
    r.request_quota = spec.effective_burst();
    r.requests_remaining = cell.gcra.remaining(spec.rpm, r.request_quota, now_ms);
    r.requests_reset_ms = cell.gcra.reset_ms(spec.rpm, now_ms);
  }
  if (spec.tpm != 0) {
    r.token_quota = spec.tpm;
    r.tokens_remaining = TokenWindow::remaining(tokens, spec.tpm);
    r.tokens_reset_ms = TokenWindow::reset_ms(tokens, now_ms);
  }
  return r;
}

}  // namespace

std::shared_ptr<LimitCell> LimitCells::cell(const std::string& id) {
  MutexLock lock(mu_);
  std::shared_ptr<LimitCell>& slot = cells_[id];
  if (!slot) slot = std::make_shared<LimitCell>(id);
  return slot;
}

size_t LimitCells::prune() {
  MutexLock lock(mu_);
  return std::erase_if(cells_, [](const auto& entry) { return entry.second.use_count() == 1; });
}

size_t LimitCells::size() const {
  MutexLock lock(mu_);
  return cells_.size();
}

int64_t LocalLimiter::system_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

LocalLimiter::LocalLimiter(WallClock now_ms) : now_ms_(std::move(now_ms)) {}

Admission LocalLimiter::admit_now(std::span<const LimitRule* const> rules, const Demand& demand,
                                  int64_t now_ms) {
  assert(!rules.empty() && rules.size() <= kMaxRules);
  LockedCells cells(rules, cells_);
  const int64_t demand_nanos = usd_to_nanos(demand.usd);
  TokenWindow::Summary tokens[kMaxRules];
  Verdict verdict;
  for (size_t i = 0; i < cells.size(); ++i) {
    check_rule(*rules[i], cells[i], demand, demand_nanos, now_ms, tokens[i], verdict);
  }
  Admission a;
  a.at_ms = now_ms;
  if (verdict.rule != nullptr) {
    a.refusal = verdict.limit == Limit::kBudget ? Refusal::kBudget : Refusal::kRateLimit;
    a.retry_after_ms = verdict.retry_after_ms;
    a.message = describe(verdict, demand);
  } else {
    for (size_t i = 0; i < cells.size(); ++i) {
      reserve_rule(*rules[i], cells[i], demand, demand_nanos, now_ms, tokens[i]);
    }
  }
  for (size_t i = 0; i < cells.size(); ++i) {
    if (rules[i]->spec.rpm == 0 && rules[i]->spec.tpm == 0) continue;
    add_reading(a, read_rule(*rules[i], cells[i], tokens[i], now_ms));
  }
  return a;
}

void LocalLimiter::settle_now(std::span<const LimitRule* const> rules, const Demand& demand,
                              const Admission& admission, const Settlement& settlement,
                              int64_t now_ms) NO_THREAD_SAFETY_ANALYSIS {
  if (!admission.admitted() || rules.empty()) return;
  LockedCells cells(rules, cells_);
  const int64_t usd_delta = usd_to_nanos(settlement.usd) - usd_to_nanos(demand.usd);
  for (size_t i = 0; i < cells.size(); ++i) {
    const LimitSpec& spec = rules[i]->spec;
    LimitCell& cell = cells[i];
    if (spec.tpm != 0 && !settlement.estimated) {
      cell.tokens.settle(admission.at_ms, demand.tokens, settlement.tokens, now_ms);
    }
    if (spec.budget && !settlement.estimated) {
      cell.budget.settle(spec.budget->period, usd_delta, admission.at_ms);
    }
    if (spec.max_in_flight != 0 && cell.in_flight > 0) --cell.in_flight;
  }
}

Task<Admission> LocalLimiter::admit(std::span<const LimitRule* const> rules, const Demand& demand) {
  co_return admit_now(rules, demand, now_ms_());
}

void LocalLimiter::settle(std::span<const LimitRule* const> rules, const Demand& demand,
                          const Admission& admission, const Settlement& settlement) {
  settle_now(rules, demand, admission, settlement, now_ms_());
}

}  // namespace rolter
