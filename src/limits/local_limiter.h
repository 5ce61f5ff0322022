// LocalLimiter: the exact, in-process Limiter (SPEC §15, `[limits] backend = "local"`), and the
// cells that keep each scope's counters across config reloads.
//
//   LocalLimiter limiter;                                  // wall clock: system_clock
//   rule.cell = limiter.cells().cell(rule.id);             // once per rule, when a snapshot is
//   built Admission a = limiter.admit_now(rules, demand, now_ms); limiter.settle_now(rules, demand,
//   a, settlement, now_ms);
//
// Semantics (a Redis backend mirrors them):
//   * Each rule checks the limits its spec has: budget, then rpm (limits/gcra.h), then tpm
//     (limits/token_window.h, the demand's tokens), then max_in_flight (passes iff in-flight count
//     < max). A dimension counts only requests admitted under a spec that has it, so admission and
//     settlement of one request always agree (both see the rules of the snapshot it pinned).
//   * All or nothing: every rule is checked; only if all pass is the demand reserved in every rule
//     (rpm: one request; tpm: the estimate; in-flight: +1; budget: the estimate's usd). A refused
//     request changes nothing.
//   * Refusal: the first refusing limit, rules in the caller's order and limits in the order above,
//     decides the kind (kBudget for a budget, else kRateLimit) and the message ("key 'a': 60
//     requests per minute"). retry_after_ms is the largest retry-after of every refusing limit of
//     every rule: the earliest time this request could pass everything that refused it. A full
//     in-flight limit has no known end; it asks for kInFlightRetryMs.
//   * Readings: one per rule with rpm or tpm, after the reservation (or the current state when
//     refused), the smallest remaining fraction first, at most Admission::kMaxReadings.
//   * Settlement (admitted requests only, once): tpm += actual - estimate in the reservation's
//     bucket; budget += actual usd - estimated usd in the reservation's period; in-flight -= 1
//     (never below zero). A settlement marked `estimated` keeps the reservation as the charge.
//   * Demand::request_id and lease_ms are not used: in-flight counts die with the process.
//
// Cells: the state of one rule id (GCRA, token window, budget, in-flight), shared by every rule
// with that id in every snapshot. A reload that keeps an id keeps its state, and a changed spec
// applies its new values to the old state. LimitCells::prune() forgets cells no rule holds.
//
// Thread-safety: LocalLimiter and LimitCells may be called from any thread. An admission or
// settlement locks the cells of its rules in address order, so requests of unrelated scopes do
// not contend and two requests sharing cells cannot deadlock.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>

#include "common/mutex.h"
#include "limits/budget_period.h"
#include "limits/gcra.h"
#include "limits/limiter.h"
#include "limits/token_window.h"

namespace rolter {

struct LimitCell {
  explicit LimitCell(std::string cell_id) : id(std::move(cell_id)) {}

  const std::string id;
  Mutex mu;
  Gcra gcra GUARDED_BY(mu);
  TokenWindow tokens GUARDED_BY(mu);
  BudgetState budget GUARDED_BY(mu);
  uint64_t in_flight GUARDED_BY(mu) = 0;
};

class LimitCells {
 public:
  // The cell of `id`, created empty the first time.
  std::shared_ptr<LimitCell> cell(const std::string& id) EXCLUDES(mu_);
  // Forgets the cells that no rule holds any more (call after a reload has released the old
  // snapshot); returns how many were forgotten.
  size_t prune() EXCLUDES(mu_);
  size_t size() const EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<LimitCell>> cells_ GUARDED_BY(mu_);
};

class LocalLimiter final : public Limiter {
 public:
  using WallClock = std::function<int64_t()>;  // unix milliseconds
  // A full in-flight limit frees when some request ends, which nobody can predict: one second.
  static constexpr int64_t kInFlightRetryMs = 1000;

  static int64_t system_now_ms();

  explicit LocalLimiter(WallClock now_ms = &LocalLimiter::system_now_ms);

  LimitCells& cells() { return cells_; }

  // Completes without suspending.
  Task<Admission> admit(std::span<const LimitRule* const> rules, const Demand& demand) override;
  void settle(std::span<const LimitRule* const> rules, const Demand& demand,
              const Admission& admission, const Settlement& settlement) override;

  // The synchronous cores of admit() and settle(), at an explicit time. They allocate nothing
  // once every rule's cell exists, except the message of a refusal.
  // REQUIRES: as Limiter::admit / Limiter::settle.
  Admission admit_now(std::span<const LimitRule* const> rules, const Demand& demand,
                      int64_t now_ms);
  void settle_now(std::span<const LimitRule* const> rules, const Demand& demand,
                  const Admission& admission, const Settlement& settlement, int64_t now_ms);

 private:
  WallClock now_ms_;
  LimitCells cells_;
};

}  // namespace rolter
