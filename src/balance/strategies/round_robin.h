// RoundRobinBalancer: SPEC §6.1. A shared atomic counter modulo the candidate count; with an
// eligibility predicate it walks forward from the counter to the next eligible candidate.
//
// Thread-safety: lock-free; every method may be called concurrently. No allocation per pick.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "balance/load_balancer.h"
#include "balance/strategy_names.h"

namespace rolter {

class RoundRobinBalancer final : public LoadBalancer {
 public:
  explicit RoundRobinBalancer(size_t candidate_count) : count_(candidate_count) {}

  std::string_view name() const override { return strategy::kRoundRobin; }
  std::optional<size_t> pick(const RouteContext& ctx, const Loads& loads) override;
  std::optional<size_t> pick_eligible(const RouteContext& ctx, const Loads& loads,
                                      Eligible eligible) override;

 private:
  const size_t count_;
  std::atomic<uint64_t> next_{0};
};

}  // namespace rolter
