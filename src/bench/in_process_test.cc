#include "bench/in_process.h"

#include <gtest/gtest.h>

#include "bench/synthetic.h"

namespace rolter::bench {
namespace {

InProcessOptions small_fleet() {
  InProcessOptions o;
  o.engines = 4;
  o.kv_tokens_per_engine = 64 * 1024;
  o.progress = false;
  o.seed = 11;
  return o;
}

std::vector<TraceRequest> small_trace() {
  return generate_synthetic({.sessions = 40,
                             .turns = 4,
                             .system_prompts = 2,
                             .output_tokens = 32,
                             .session_rate = 20,
                             .think_time_ms = 500,
                             .seed = 3});
}

TEST(InProcessTest, SameSeedSameNumbers) {
  const auto trace = small_trace();
  for (const char* strategy :
       {"random", "power_of_two", "consistent_hash", "precise_cache_aware", "kv_cost"}) {
    auto a = replay_in_process(trace, strategy, small_fleet());
    auto b = replay_in_process(trace, strategy, small_fleet());
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->ttft_ms, b->ttft_ms) << strategy;
    EXPECT_EQ(a->e2e_ms, b->e2e_ms) << strategy;
    EXPECT_EQ(a->hit_tokens, b->hit_tokens) << strategy;
    EXPECT_EQ(a->query_tokens, b->query_tokens) << strategy;
    EXPECT_EQ(a->imbalance_sum, b->imbalance_sum) << strategy;
    EXPECT_EQ(a->duration_s, b->duration_s) << strategy;
    EXPECT_EQ(a->errors, 0u);
    EXPECT_EQ(a->e2e_ms.size(), trace.size());
  }
}

TEST(InProcessTest, SessionAffinityBeatsRandomOnHits) {
  const auto trace = small_trace();
  auto sticky = replay_in_process(trace, "consistent_hash", small_fleet());
  auto random = replay_in_process(trace, "random", small_fleet());
  ASSERT_TRUE(sticky && random);
  EXPECT_GT(sticky->hit_tokens, random->hit_tokens);
  EXPECT_GT(sticky->query_tokens, 0u);
}

// The engines' KV events reach the strategies' indexes through the decoder: with them,
// precise_cache_aware keeps conversations where their blocks are; with events that never arrive
// (a delay longer than the run) every KV score is neutral and it degrades to least load.
TEST(InProcessTest, KvEventsReachThePreciseIndex) {
  const auto trace = small_trace();
  InProcessOptions never = small_fleet();
  never.kv_event_delay_ms = 1e12;
  auto with_events = replay_in_process(trace, "precise_cache_aware", small_fleet());
  auto without = replay_in_process(trace, "precise_cache_aware", never);
  ASSERT_TRUE(with_events && without);
  EXPECT_EQ(with_events->errors, 0u);
  EXPECT_GT(with_events->hit_tokens, without->hit_tokens * 6 / 5);
}

TEST(InProcessTest, UnknownStrategyIsAnError) {
  auto r = replay_in_process(small_trace(), "no_such_strategy", small_fleet());
  EXPECT_FALSE(r);
}

}  // namespace
}  // namespace rolter::bench
