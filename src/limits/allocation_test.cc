// Proves that admission and settlement allocate nothing once every rule's cell exists (the
// message of a refusal may), and that the rate-limit headers are visited without allocating.
// Global operator new/delete are replaced in this binary only, with versions that count while a
// test has counting switched on.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string_view>

#include "common/testing/counting_new.h"
#include "limits/local_limiter.h"
#include "limits/rate_limit_headers.h"

namespace {

// The counters of common/testing/counting_new.h, which this binary links.
std::atomic<bool>& g_counting = rolter::alloc_count::counting;
std::atomic<long>& g_allocations = rolter::alloc_count::allocations;

}  // namespace

namespace rolter {
namespace {

constexpr int64_t kT0 = 1'796'396'400'000;

class Counting {
 public:
  Counting() {
    g_allocations.store(0);
    g_counting.store(true);
  }
  ~Counting() { g_counting.store(false); }
  long allocations() const { return g_allocations.load(); }
};

TEST(LimitsAllocation, AdmitAndSettleAllocateNothing) {
  LocalLimiter limiter([] { return kT0; });
  LimitRule key, team, route;
  key.id = "key:a";
  key.label = "key 'a'";
  key.spec.rpm = 6'000'000;
  key.spec.burst = 1'000'000;
  key.spec.tpm = 1'000'000'000'000;
  key.spec.max_in_flight = 100;
  team.id = "team:t";
  team.label = "team 't'";
  team.spec.tpm = 1'000'000'000'000;
  team.spec.budget = BudgetSpec{1e6, BudgetPeriod::kMonth};
  route.id = "key:a|route:qwen*";
  route.label = "key 'a' on 'qwen*'";
  route.route_glob = "qwen*";
  route.spec.rpm = 6'000'000;
  route.spec.burst = 1'000'000;
  for (LimitRule* r : {&key, &team, &route}) r->cell = limiter.cells().cell(r->id);
  const LimitRule* rules[] = {&key, &team, &route};
  Demand demand;
  demand.tokens = 2'000;
  demand.usd = 0.002;

  long allocations = 0;
  int admitted = 0;
  std::string headers;
  headers.reserve(4096);
  {
    Counting counting;
    for (int i = 0; i < 1'000; ++i) {
      const Admission a = limiter.admit_now(rules, demand, kT0 + i);
      if (!a.admitted()) continue;
      ++admitted;
      headers.clear();
      append_rate_limit_headers(a, headers);
      limiter.settle_now(rules, demand, a, Settlement{1'500, 0.001, false}, kT0 + i + 5);
    }
    allocations = counting.allocations();
  }
  EXPECT_EQ(admitted, 1'000);
  EXPECT_EQ(allocations, 0);
}

}  // namespace
}  // namespace rolter
