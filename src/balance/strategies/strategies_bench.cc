// ns per pick for each simple strategy at 2, 8 and 64 candidates, with every candidate eligible
// (the common case) and with a quarter of them ineligible (a retry, or parked replicas).
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "balance/balancer_factory.h"
#include "balance/scored_stack.h"
#include "balance/scorers/least_load.h"
#include "balance/scorers/static_weight.h"
#include "balance/testing/candidates_fixture.h"
#include "balance/testing/loads_fixture.h"

namespace rolter {
namespace {

std::vector<CandidateSpec> bench_candidates(size_t n) {
  std::vector<double> weights;
  for (size_t i = 0; i < n; ++i) weights.push_back(static_cast<double>(1 + i % 3));
  return make_candidates(weights);
}

void set_loads(LoadsFixture& loads) {
  for (size_t i = 0; i < loads.size(); ++i) loads.set(i, static_cast<uint32_t>((i * 7) % 5));
}

void run(benchmark::State& state, LoadBalancer& lb, bool some_ineligible) {
  const size_t n = static_cast<size_t>(state.range(0));
  LoadsFixture loads(n);
  set_loads(loads);
  uint64_t digest = 0;
  for (auto _ : state) {
    RouteContext ctx;
    ctx.prompt_digest = ++digest;  // a fresh key per request, as consistent_hash sees in practice
    const auto idx = some_ineligible
                         ? lb.pick_eligible(ctx, loads.view(), [](size_t c) { return c % 4 != 1; })
                         : lb.pick_eligible(ctx, loads.view(), [](size_t) { return true; });
    benchmark::DoNotOptimize(idx);
  }
  state.SetItemsProcessed(state.iterations());
}

void bm_strategy(benchmark::State& state, std::string strategy, bool some_ineligible) {
  const auto candidates = bench_candidates(static_cast<size_t>(state.range(0)));
  auto lb = make_balancer(strategy, candidates, BalancerDeps{});
  if (!lb) {
    state.SkipWithError(lb.error().c_str());
    return;
  }
  run(state, **lb, some_ineligible);
}

void bm_scored_stack(benchmark::State& state) {
  const auto candidates = bench_candidates(static_cast<size_t>(state.range(0)));
  std::vector<ScoredStack::Entry> entries;
  entries.push_back({std::make_unique<LeastLoadScorer>(), 1.0});
  entries.push_back({std::make_unique<StaticWeightScorer>(candidates), 1.0});
  ScoredStack stack("pipeline", candidates.size(), std::move(entries), default_random());
  run(state, stack, false);
}

// The candidate counts every strategy is measured at: a pair, a typical pool, a large fleet.
void all_sizes(benchmark::internal::Benchmark* b) { b->Arg(2)->Arg(8)->Arg(64); }
// Ineligibility only matters once there are a few candidates to skip.
void pool_sizes(benchmark::internal::Benchmark* b) { b->Arg(8)->Arg(64); }

BENCHMARK_CAPTURE(bm_strategy, round_robin, std::string("round_robin"), false)->Apply(all_sizes);
BENCHMARK_CAPTURE(bm_strategy, random, std::string("random"), false)->Apply(all_sizes);
BENCHMARK_CAPTURE(bm_strategy, power_of_two, std::string("power_of_two"), false)->Apply(all_sizes);
BENCHMARK_CAPTURE(bm_strategy, weighted, std::string("weighted"), false)->Apply(all_sizes);
BENCHMARK_CAPTURE(bm_strategy, consistent_hash, std::string("consistent_hash"), false)
    ->Apply(all_sizes);

BENCHMARK_CAPTURE(bm_strategy, round_robin_some_ineligible, std::string("round_robin"), true)
    ->Apply(pool_sizes);
BENCHMARK_CAPTURE(bm_strategy, random_some_ineligible, std::string("random"), true)
    ->Apply(pool_sizes);
BENCHMARK_CAPTURE(bm_strategy, power_of_two_some_ineligible, std::string("power_of_two"), true)
    ->Apply(pool_sizes);
BENCHMARK_CAPTURE(bm_strategy, weighted_some_ineligible, std::string("weighted"), true)
    ->Apply(pool_sizes);
BENCHMARK_CAPTURE(bm_strategy, consistent_hash_some_ineligible, std::string("consistent_hash"),
                  true)
    ->Apply(pool_sizes);

BENCHMARK(bm_scored_stack)->Apply(all_sizes);

}  // namespace
}  // namespace rolter
