// ns per pick for the KV-event strategies (SPEC §6.8, §6.14) with 2,000-token prompts at 8 and 64
// candidates, every candidate eligible and its stream live.
//
// The fleet holds, per candidate, a different share of the prompt's 125 blocks (candidate i holds
// the first (i * 37) % 126 of them), so every pick walks a real mix of long and short leading runs
// under each index's shared lock. kv_cost's models are warm, so it estimates every candidate.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "balance/evidence/instance_evidence.h"
#include "balance/stacks.h"
#include "balance/strategies/kv_cost.h"
#include "balance/testing/candidates_fixture.h"
#include "balance/testing/kv_fixture.h"
#include "balance/testing/loads_fixture.h"

namespace rolter {
namespace {

constexpr size_t kPromptTokens = 2000;

struct KvBenchFleet {
  explicit KvBenchFleet(size_t n)
      : kv(std::make_unique<KvResidency[]>(n)),
        evidence(std::make_unique<InstanceEvidence[]>(n)),
        candidates(make_candidates(n)),
        prompt(token_run(1, kPromptTokens)) {
    for (size_t i = 0; i < n; ++i) {
      const size_t held = (i * 37) % 126;
      store_blocks(kv[i], std::span(prompt).first(held * 16), 1000 * (i + 1));
      kv[i].state.store(KvStreamState::kLive);
      candidates[i].kv = &kv[i];
      candidates[i].evidence = &evidence[i];
      for (int s = 0; s < 64; ++s) {
        const double q = s % 7;
        const double k = (s % 5) * 0.5;
        evidence[i].ttft.record(q, 0, k, 20 + 30 * q + 200 * k);
      }
    }
  }
  std::unique_ptr<KvResidency[]> kv;
  std::unique_ptr<InstanceEvidence[]> evidence;
  std::vector<CandidateSpec> candidates;
  std::vector<uint32_t> prompt;
};

void run(benchmark::State& state, LoadBalancer& lb, const KvBenchFleet& fleet) {
  LoadsFixture loads(fleet.candidates.size());
  for (size_t i = 0; i < loads.size(); ++i) loads.set(i, static_cast<uint32_t>((i * 7) % 5));
  RouteContext ctx;
  ctx.token_ids = std::span<const uint32_t>(fleet.prompt);
  for (auto _ : state) {
    const auto idx = lb.pick_eligible(ctx, loads.view(), [](size_t) { return true; });
    benchmark::DoNotOptimize(idx);
  }
  state.SetItemsProcessed(state.iterations());
}

void bm_precise_cache_aware(benchmark::State& state) {
  const KvBenchFleet fleet(static_cast<size_t>(state.range(0)));
  auto lb = make_precise_cache_aware(fleet.candidates, BalancerDeps{});
  if (!lb) {
    state.SkipWithError(lb.error().c_str());
    return;
  }
  run(state, **lb, fleet);
}

void bm_kv_cost(benchmark::State& state) {
  const KvBenchFleet fleet(static_cast<size_t>(state.range(0)));
  KvCostBalancer lb(fleet.candidates, default_random());
  run(state, lb, fleet);
}

void pool_sizes(benchmark::internal::Benchmark* b) { b->Arg(8)->Arg(64); }

BENCHMARK(bm_precise_cache_aware)->Apply(pool_sizes);
BENCHMARK(bm_kv_cost)->Apply(pool_sizes);

}  // namespace
}  // namespace rolter
