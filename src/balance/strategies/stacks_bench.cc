// ns per pick for the score-stack strategies (balance/stacks.h) at 8 and 64 candidates, every
// candidate eligible, each fed the signal it ranks: a remembered session (pipeline), warm latency
// models (predicted_latency), latency averages (fastest), catalog prices (cheapest) and a resident
// adapter (lora_aware); and the strategies built around a stack: policy mode with all three
// plugins voting, and adaptive with its blend engaged.
//
// Until prefix_affinity is registered (balance/scorer_registry.cc) the pipeline runs without it
// and lora_aware runs as adapter_residency 1.0 + least_load 0.25; both benchmarks' labels say so.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "balance/adaptive/adaptive_policy.h"
#include "balance/balancer_factory.h"
#include "balance/decision_verdict.h"
#include "balance/evidence/instance_evidence.h"
#include "balance/policy/policy_settings.h"
#include "balance/scorer_registry.h"
#include "balance/stacks.h"
#include "balance/testing/candidates_fixture.h"
#include "balance/testing/loads_fixture.h"

namespace rolter {
namespace {

using Weights = std::vector<std::pair<std::string, double>>;

// Sessions the pipeline benchmark cycles through, all remembered: every pick finds its session.
constexpr size_t kSessions = 1024;

// Candidates with weights, prices and evidence: latency samples and warm predictors that differ
// per candidate, so no stack degenerates into a tie.
struct BenchFleet {
  explicit BenchFleet(size_t n)
      : evidence(std::make_unique<InstanceEvidence[]>(n)), candidates(make_candidates(n)) {
    for (size_t i = 0; i < n; ++i) {
      CandidateSpec& c = candidates[i];
      c.weight = static_cast<double>(1 + i % 3);
      c.price = 1.0 + static_cast<double>(i % 5);
      c.evidence = &evidence[i];
      for (int s = 0; s < 64; ++s) {
        const double q = s % 7;
        const double k = (s % 5) * 0.5;
        evidence[i].record_success(q, k,
                                   50.0 + 10.0 * static_cast<double>(i % 4) + 20 * q + 200 * k);
      }
    }
  }
  std::unique_ptr<InstanceEvidence[]> evidence;
  std::vector<CandidateSpec> candidates;
};

void set_loads(LoadsFixture& loads) {
  for (size_t i = 0; i < loads.size(); ++i) loads.set(i, static_cast<uint32_t>((i * 7) % 5));
}

// Picks with ctxs[i % ctxs.size()], so a stack that keys on the request sees varied requests.
void run(benchmark::State& state, LoadBalancer& lb, const std::vector<RouteContext>& ctxs) {
  LoadsFixture loads(static_cast<size_t>(state.range(0)));
  set_loads(loads);
  size_t i = 0;
  for (auto _ : state) {
    const auto idx =
        lb.pick_eligible(ctxs[i++ % ctxs.size()], loads.view(), [](size_t) { return true; });
    benchmark::DoNotOptimize(idx);
  }
  state.SetItemsProcessed(state.iterations());
}

void bm_stack(benchmark::State& state,
              StackResult (*make)(std::span<const CandidateSpec>, const BalancerDeps&)) {
  const BenchFleet fleet(static_cast<size_t>(state.range(0)));
  auto lb = make(fleet.candidates, BalancerDeps{});
  if (!lb) {
    state.SkipWithError(lb.error().c_str());
    return;
  }
  RouteContext ctx;
  ctx.prompt_len = 6000;
  run(state, **lb, {ctx});
}

void bm_pipeline(benchmark::State& state) {
  const BenchFleet fleet(static_cast<size_t>(state.range(0)));
  state.SetLabel("default stack");
  auto lb = make_pipeline(fleet.candidates, BalancerDeps{}, {});
  if (!lb) {
    state.SkipWithError(lb.error().c_str());
    return;
  }
  std::vector<std::string> keys;
  for (size_t s = 0; s < kSessions; ++s) keys.push_back("session-" + std::to_string(s));
  std::vector<RouteContext> ctxs(kSessions);
  for (size_t s = 0; s < kSessions; ++s) {
    ctxs[s].session_key = keys[s];
    (*lb)->observe(s % fleet.candidates.size(), ctxs[s]);
  }
  run(state, **lb, ctxs);
}

void bm_lora_aware(benchmark::State& state) {
  const BenchFleet fleet(static_cast<size_t>(state.range(0)));
  auto lb = make_lora_aware(fleet.candidates, BalancerDeps{});
  if (!lb) {
    state.SkipWithError(lb.error().c_str());
    return;
  }
  // Every candidate holds 8 adapters (the default max_loras); the request's is on one in four.
  std::vector<std::string> names;
  for (int a = 0; a < 9; ++a) names.push_back("adapter-" + std::to_string(a));
  for (size_t i = 0; i < fleet.candidates.size(); ++i) {
    for (int a = 0; a < 8; ++a) {
      RouteContext served;
      served.adapter = names[a + (i % 4 == 0 ? 1 : 0)];
      (*lb)->observe(i, served);
    }
  }
  RouteContext ctx;
  ctx.adapter = names[8];
  run(state, **lb, {ctx});
}

// Policy mode with least_inflight, session_affinity and decision_service all voting: every
// request has a session key and a verdict over two models.
void bm_policy(benchmark::State& state) {
  BenchFleet fleet(static_cast<size_t>(state.range(0)));
  for (size_t i = 0; i < fleet.candidates.size(); ++i) {
    fleet.candidates[i].model = i % 2 == 0 ? "small" : "large";
  }
  const PolicySettings settings{
      .least_inflight_weight = 1, .session_affinity_weight = 1, .decision_weight = 10};
  auto lb = make_balancer("policy", fleet.candidates, BalancerDeps{}, {.policy = &settings});
  if (!lb) {
    state.SkipWithError(lb.error().c_str());
    return;
  }
  const DecisionVerdict verdict{
      .choice = "large", .probabilities = {{"small", 0.2}, {"large", 0.8}}, .confidence = 0.9};
  std::vector<std::string> keys;
  for (size_t s = 0; s < kSessions; ++s) keys.push_back("session-" + std::to_string(s));
  std::vector<RouteContext> ctxs(kSessions);
  for (size_t s = 0; s < kSessions; ++s) {
    ctxs[s].policy_session_key = keys[s];
    ctxs[s].decision = &verdict;
  }
  run(state, **lb, ctxs);
}

// Adaptive with its blend engaged (every candidate has latency samples and a price; no
// min_samples wait) and the default 5% exploration.
void bm_adaptive(benchmark::State& state) {
  const BenchFleet fleet(static_cast<size_t>(state.range(0)));
  const AdaptivePolicy policy{.enabled = true, .min_samples = 0};
  auto lb = make_balancer("adaptive", fleet.candidates, BalancerDeps{}, {.adaptive = &policy});
  if (!lb) {
    state.SkipWithError(lb.error().c_str());
    return;
  }
  run(state, **lb, {RouteContext{}});
}

void pool_sizes(benchmark::internal::Benchmark* b) { b->Arg(8)->Arg(64); }

BENCHMARK(bm_pipeline)->Apply(pool_sizes);
BENCHMARK_CAPTURE(bm_stack, predicted_latency, &make_predicted_latency)->Apply(pool_sizes);
BENCHMARK(bm_lora_aware)->Apply(pool_sizes);
BENCHMARK_CAPTURE(bm_stack, cheapest, &make_cheapest)->Apply(pool_sizes);
BENCHMARK_CAPTURE(bm_stack, fastest, &make_fastest)->Apply(pool_sizes);
BENCHMARK(bm_policy)->Apply(pool_sizes);
BENCHMARK(bm_adaptive)->Apply(pool_sizes);

}  // namespace
}  // namespace rolter
