// The cost of one admission and its settlement in the local limiter (SPEC §15 asks for well
// under 2 µs per request), with one rule (a key) and three (key, team, route).
#include <benchmark/benchmark.h>

#include "limits/local_limiter.h"
#include "limits/rate_limit_headers.h"

namespace rolter {
namespace {

constexpr int64_t kT0 = 1'796'396'400'000;

LimitRule make_rule(LocalLimiter& limiter, const char* id, const char* label) {
  LimitRule r;
  r.id = id;
  r.label = label;
  // Limits high enough that every request passes: the admitted path is the one that matters.
  r.spec.rpm = 60'000'000;
  r.spec.burst = 1'000'000;
  r.spec.tpm = 1'000'000'000'000;
  r.cell = limiter.cells().cell(r.id);
  return r;
}

void BM_AdmitSettle(benchmark::State& state) {
  LocalLimiter limiter([] { return kT0; });
  LimitRule key = make_rule(limiter, "key:a", "key 'a'");
  key.spec.max_in_flight = 1'000;
  LimitRule team = make_rule(limiter, "team:t", "team 't'");
  team.spec.budget = BudgetSpec{1e9, BudgetPeriod::kMonth};
  LimitRule route = make_rule(limiter, "key:a|route:qwen*", "key 'a' on 'qwen*'");
  route.route_glob = "qwen*";
  const LimitRule* rules[] = {&key, &team, &route};
  const std::span<const LimitRule* const> used(rules, static_cast<size_t>(state.range(0)));
  Demand demand;
  demand.tokens = 2'000;
  demand.usd = 0.002;
  int64_t now = kT0;
  for (auto _ : state) {
    now += 1;  // a fresh millisecond per request: the window's buckets and the GCRA both move
    Admission a = limiter.admit_now(used, demand, now);
    benchmark::DoNotOptimize(a);
    limiter.settle_now(used, demand, a, Settlement{1'500, 0.0015, false}, now);
  }
}
BENCHMARK(BM_AdmitSettle)->Arg(1)->Arg(3);

void BM_Headers(benchmark::State& state) {
  LocalLimiter limiter([] { return kT0; });
  LimitRule key = make_rule(limiter, "key:a", "key 'a'");
  LimitRule team = make_rule(limiter, "team:t", "team 't'");
  const LimitRule* rules[] = {&key, &team};
  Demand demand;
  demand.tokens = 2'000;
  const Admission a = limiter.admit_now(rules, demand, kT0);
  std::string out;
  out.reserve(1024);
  for (auto _ : state) {
    out.clear();
    append_rate_limit_headers(a, out);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_Headers);

}  // namespace
}  // namespace rolter
