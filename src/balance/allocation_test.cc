// Proves SPEC §5's "zero heap allocations per pick" for the simple strategies and for a score stack
// of the simple scorers. Global operator new/delete are replaced in this binary only, with versions
// that count while a test has counting switched on.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "balance/adaptive/adaptive_policy.h"
#include "balance/adaptive/adaptive_route_state.h"
#include "balance/balancer_factory.h"
#include "balance/decision_verdict.h"
#include "balance/evidence/instance_evidence.h"
#include "balance/lmcache_signal.h"
#include "balance/policy/policy_settings.h"
#include "balance/scored_stack.h"
#include "balance/scorers/least_load.h"
#include "balance/scorers/static_weight.h"
#include "balance/stacks.h"
#include "balance/testing/candidates_fixture.h"
#include "balance/testing/kv_fixture.h"
#include "balance/testing/loads_fixture.h"
#include "common/testing/counting_new.h"

namespace {

// The counters of common/testing/counting_new.h, which this binary links.
std::atomic<bool>& g_counting = rolter::alloc_count::counting;
std::atomic<long>& g_allocations = rolter::alloc_count::allocations;

}  // namespace

namespace rolter {
namespace {

constexpr int kWarmUpPicks = 100;
constexpr int kMeasuredPicks = 20000;

// Runs a mix of picks: plain, all eligible, some ineligible, none eligible; with a session key, a
// digest, and no key (consistent_hash's three paths).
void run_picks(LoadBalancer& lb, LoadsFixture& loads, int picks) {
  const size_t n = loads.size();
  for (int i = 0; i < picks; ++i) {
    loads.set(static_cast<size_t>(i) % n, static_cast<uint32_t>(i % 7));
    RouteContext ctx;
    if (i % 3 == 0) ctx.session_key = "session-key-of-reasonable-length";
    if (i % 3 == 1) ctx.prompt_digest = static_cast<uint64_t>(i);
    const size_t skip = static_cast<size_t>(i) % n;
    switch (i % 4) {
      case 0:
        (void)lb.pick(ctx, loads.view());
        break;
      case 1:
        (void)lb.pick_eligible(ctx, loads.view(), [](size_t) { return true; });
        break;
      case 2:
        (void)lb.pick_eligible(ctx, loads.view(), [skip](size_t c) { return c % 3 != skip % 3; });
        break;
      default:
        (void)lb.pick_eligible(ctx, loads.view(), [](size_t) { return false; });
        break;
    }
  }
}

// Heap allocations made by picks(kMeasuredPicks), after picks(kWarmUpPicks) has let per-thread
// scratch buffers grow.
template <typename Picks>
long allocations_of(Picks picks) {
  picks(kWarmUpPicks);
  g_allocations.store(0);
  g_counting.store(true);
  picks(kMeasuredPicks);
  g_counting.store(false);
  return g_allocations.load();
}

long allocations_during(LoadBalancer& lb, LoadsFixture& loads) {
  return allocations_of([&](int count) { run_picks(lb, loads, count); });
}

class AllocationTest : public ::testing::TestWithParam<size_t> {};

TEST_P(AllocationTest, SimpleStrategiesDoNotAllocatePerPick) {
  const size_t n = GetParam();
  std::vector<double> weights;
  for (size_t i = 0; i < n; ++i) weights.push_back(static_cast<double>(i % 4));  // zeros included
  const auto candidates = make_candidates(weights);
  SeededRandom random(1);
  // SPEC §5's simple strategies; the score stacks are covered below.
  for (std::string_view strategy :
       {"round_robin", "random", "power_of_two", "weighted", "consistent_hash"}) {
    auto lb = make_balancer(strategy, candidates, BalancerDeps{.random = &random});
    ASSERT_TRUE(lb.has_value()) << lb.error();
    LoadsFixture loads(n);
    EXPECT_EQ(allocations_during(**lb, loads), 0) << strategy << " with " << n << " candidates";
  }
}

TEST_P(AllocationTest, WeightedFallbackDoesNotAllocatePerPick) {
  const size_t n = GetParam();
  std::vector<double> weights;
  for (size_t i = 0; i < n; ++i) weights.push_back(1.0 + 0.1234567891 * static_cast<double>(i));
  const auto candidates = make_candidates(weights);
  auto lb = make_balancer("weighted", candidates, BalancerDeps{});
  ASSERT_TRUE(lb.has_value());
  LoadsFixture loads(n);
  EXPECT_EQ(allocations_during(**lb, loads), 0);
}

TEST_P(AllocationTest, ScoredStackDoesNotAllocatePerPick) {
  const size_t n = GetParam();
  const auto candidates = make_candidates(n);
  SeededRandom random(2);
  std::vector<ScoredStack::Entry> entries;
  entries.push_back({std::make_unique<LeastLoadScorer>(), 1.0});
  entries.push_back({std::make_unique<StaticWeightScorer>(candidates), 1.0});
  ScoredStack stack("pipeline", n, std::move(entries), random);
  LoadsFixture loads(n);
  EXPECT_EQ(allocations_during(stack, loads), 0);
}

TEST_P(AllocationTest, ScoreStackStrategiesDoNotAllocatePerPick) {
  // The stacks of balance/stacks.h over warm evidence, prices, LMCache occupancies and a
  // remembered session.
  const size_t n = GetParam();
  auto evidence = std::make_unique<InstanceEvidence[]>(n);
  auto lmcache = std::make_unique<LmcacheSignal[]>(n);
  auto candidates = make_candidates(n);
  for (size_t i = 0; i < n; ++i) {
    candidates[i].price = static_cast<double>(i % 3);
    candidates[i].evidence = &evidence[i];
    lmcache[i].occupancy = static_cast<double>(i % 4) / 4;  // 0 (neutral), 0.25, 0.5, 0.75
    lmcache[i].available = true;
    lmcache[i].fresh = true;
    candidates[i].lmcache = &lmcache[i];
    for (int s = 0; s < 16; ++s) evidence[i].record_success(s % 4, 1, 100.0 + 10.0 * i + s);
  }
  SeededRandom random(3);
  const BalancerDeps deps{.random = &random};
  const std::vector<std::pair<std::string, double>> pipeline = {
      {"session_affinity", 1.0}, {"static_weight", 1.0}, {"least_load", 1.0}};
  using Make = StackResult (*)(std::span<const CandidateSpec>, const BalancerDeps&);
  std::vector<StackResult> stacks;
  stacks.push_back(make_pipeline(candidates, deps, pipeline));
  for (Make make : {&make_predicted_latency, &make_cheapest, &make_fastest, &make_lmcache_aware}) {
    stacks.push_back(make(candidates, deps));
  }
  RouteContext session;
  session.session_key = "session-key-of-reasonable-length";
  for (auto& lb : stacks) {
    ASSERT_TRUE(lb.has_value()) << lb.error();
    (*lb)->observe(0, session);
    LoadsFixture loads(n);
    EXPECT_EQ(allocations_during(**lb, loads), 0) << (*lb)->name() << " with " << n;
  }
}

// adaptive (SPEC §6.10), engaged (blend and exploration) and disengaged (its pipeline fallback),
// over warm evidence and prices.
TEST_P(AllocationTest, AdaptiveDoesNotAllocatePerPick) {
  const size_t n = GetParam();
  auto evidence = std::make_unique<InstanceEvidence[]>(n);
  auto candidates = make_candidates(n);
  for (size_t i = 0; i < n; ++i) {
    candidates[i].price = static_cast<double>(i % 3);
    candidates[i].evidence = &evidence[i];
    evidence[i].latency.record(100.0 + 10.0 * static_cast<double>(i % 5));
  }
  SeededRandom random(5);
  const AdaptivePolicy engaged{.enabled = true, .exploration_ratio = 0.3, .min_samples = 0};
  const AdaptivePolicy waiting{.enabled = true, .min_samples = 1000000};
  for (const AdaptivePolicy* policy : {&engaged, &waiting}) {
    AdaptiveRouteState state("m");
    auto lb = make_balancer("adaptive", candidates, BalancerDeps{.random = &random},
                            {.adaptive = policy, .adaptive_state = &state});
    ASSERT_TRUE(lb.has_value()) << lb.error();
    LoadsFixture loads(n);
    EXPECT_EQ(allocations_during(**lb, loads), 0) << "min_samples " << policy->min_samples;
  }
}

TEST_P(AllocationTest, PromptAwareStrategiesDoNotAllocatePerPick) {
  // cache_aware and the stacks with prefix affinity, over a warm tree of 32 KiB conversations,
  // picking for warm prompts, prompts that leave the tree mid-edge, and an adapter.
  const size_t n = GetParam();
  const auto candidates = make_candidates(n);
  std::vector<std::string> prompts;
  for (int c = 0; c < 8; ++c) {
    std::string text = "system prompt shared by every conversation. ";
    while (text.size() < RouteContext::kPromptBound)
      text += "turn " + std::to_string(c * 7919 + text.size()) + " ";
    prompts.push_back(text.substr(0, RouteContext::kPromptBound));
  }
  std::vector<std::string> novel = prompts;
  for (auto& text : novel) text[text.size() / 2] = '#';
  SeededRandom random(5);
  const BalancerDeps deps{.random = &random};
  for (std::string_view strategy : {"cache_aware", "pipeline", "lora_aware"}) {
    auto lb = make_balancer(strategy, candidates, deps);
    ASSERT_TRUE(lb.has_value()) << lb.error();
    RouteContext ctx;
    ctx.adapter = "adapter-a";
    for (size_t i = 0; i < prompts.size(); ++i) {
      ctx.prompt = prompts[i];
      (*lb)->observe(i % n, ctx);
    }
    LoadsFixture loads(n);
    auto picks = [&](int count) {
      for (int i = 0; i < count; ++i) {
        loads.set(static_cast<size_t>(i) % n, static_cast<uint32_t>(i % 5));
        const auto& set = i % 2 == 0 ? prompts : novel;
        ctx.prompt = set[static_cast<size_t>(i) % set.size()];
        // Observed too, so kv_cost's recent shares grow uneven and its share path runs.
        const auto pick =
            (*lb)->pick_eligible(ctx, loads.view(), [](size_t c) { return c % 5 != 1; });
        if (pick) (*lb)->observe(*pick, ctx);
      }
    };
    EXPECT_EQ(allocations_of(picks), 0) << strategy << " with " << n;
  }
}

TEST_P(AllocationTest, KvStrategiesDoNotAllocatePerPick) {
  // precise_cache_aware and kv_cost over live KV indexes that hold different shares of 2,000-token
  // prompts, with warm kv_cost models.
  const size_t n = GetParam();
  auto kv = std::make_unique<KvResidency[]>(n);
  auto evidence = std::make_unique<InstanceEvidence[]>(n);
  auto candidates = make_candidates(n);
  std::vector<std::vector<uint32_t>> prompts;
  for (uint32_t p = 0; p < 4; ++p) prompts.push_back(token_run(p * 100000, 2000));
  for (size_t i = 0; i < n; ++i) {
    store_blocks(kv[i], std::span(prompts[i % 4]).first((i * 37) % 2000), 1000 * (i + 1));
    candidates[i].kv = &kv[i];
    candidates[i].evidence = &evidence[i];
    for (int s = 0; s < 16; ++s) evidence[i].ttft.record(s % 4, s % 2, s % 3, 100.0 + 10.0 * i + s);
  }
  SeededRandom random(9);
  const BalancerDeps deps{.random = &random};
  for (std::string_view strategy : {"precise_cache_aware", "kv_cost"}) {
    auto lb = make_balancer(strategy, candidates, deps);
    ASSERT_TRUE(lb.has_value()) << lb.error();
    LoadsFixture loads(n);
    RouteContext ctx;
    auto picks = [&](int count) {
      for (int i = 0; i < count; ++i) {
        loads.set(static_cast<size_t>(i) % n, static_cast<uint32_t>(i % 5));
        ctx.token_ids = std::span<const uint32_t>(prompts[static_cast<size_t>(i) % 4]);
        // Observed too, so kv_cost's recent shares grow uneven and its share path runs.
        const auto pick =
            (*lb)->pick_eligible(ctx, loads.view(), [](size_t c) { return c % 5 != 1; });
        if (pick) (*lb)->observe(*pick, ctx);
      }
    };
    EXPECT_EQ(allocations_of(picks), 0) << strategy << " with " << n;
  }
}

TEST_P(AllocationTest, PolicyModeDoesNotAllocatePerPick) {
  // The policy finisher over least_inflight + session_affinity + decision_service, and over
  // session_affinity alone (so a request without a key takes the no-opinion round-robin).
  const size_t n = GetParam();
  auto candidates = make_candidates(n);
  for (size_t i = 0; i < n; ++i) candidates[i].model = i % 2 == 0 ? "small" : "large";
  const DecisionVerdict verdict{
      .choice = "large", .probabilities = {{"small", 0.25}, {"large", 0.75}}, .confidence = 0.9};
  PolicySettings all_plugins;
  all_plugins.least_inflight_weight = 1;
  all_plugins.session_affinity_weight = 1.5;
  all_plugins.decision_weight = 10;
  PolicySettings affinity_only;
  affinity_only.session_affinity_weight = 1;
  SeededRandom random(13);
  const BalancerDeps deps{.random = &random};
  for (const PolicySettings* settings : {&all_plugins, &affinity_only}) {
    auto lb = make_balancer("policy", candidates, deps, RouteSettings{.policy = settings});
    ASSERT_TRUE(lb.has_value()) << lb.error();
    LoadsFixture loads(n);
    auto picks = [&](int count) {
      for (int i = 0; i < count; ++i) {
        loads.set(static_cast<size_t>(i) % n, static_cast<uint32_t>(i % 7));
        RouteContext ctx;
        if (i % 3 != 2) ctx.policy_session_key = "session-key-of-reasonable-length";
        if (i % 2 == 0) ctx.decision = &verdict;
        const size_t skip = static_cast<size_t>(i) % 3;
        if (i % 4 == 0) {
          (void)(*lb)->pick(ctx, loads.view());
        } else {
          (void)(*lb)->pick_eligible(ctx, loads.view(), [skip](size_t c) { return c % 3 != skip; });
        }
      }
    };
    EXPECT_EQ(allocations_of(picks), 0) << "policy with " << n;
  }
}

TEST(AllocationCounterTest, CountsAllocations) {
  // The counter itself works: otherwise every test above would pass vacuously.
  g_allocations.store(0);
  g_counting.store(true);
  auto p = std::make_unique<std::string>(100, 'x');
  g_counting.store(false);
  EXPECT_GT(g_allocations.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(CandidateCounts, AllocationTest, ::testing::Values(2, 8, 64));

}  // namespace
}  // namespace rolter
