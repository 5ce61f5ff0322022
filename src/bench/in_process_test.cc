#include "bench/in_process.h"

#include <gtest/gtest.h>

#include <algorithm>

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

// --pd 1:2 on three hand-made requests, with a slow prefill (1 ms per token) so a step's cost
// shows which engine computed what:
//   r0 t=0     2048 tokens, 4 out: split; prefilled on engine 0; decoded on engine 2 (engine 1 is
//              busy with r1), which pulls its 128 blocks instead of computing them.
//   r1 t=100    200 tokens, 400 out: under min_uncached_tokens, straight to a decode engine.
//   r2 t=3000  r0's prompt + 100 tokens, 2 out: engine 2 holds all but 100 tokens, so it is not
//              split and goes there, though engine 1 is as idle and comes first.
struct PdCase {
  std::vector<TraceRequest> trace = {
      {.timestamp_ms = 0, .input_length = 2048, .output_length = 4, .hash_ids = {1, 2, 3, 4}},
      {.timestamp_ms = 100, .input_length = 200, .output_length = 400, .hash_ids = {9}},
      {.timestamp_ms = 3000, .input_length = 2148, .output_length = 2, .hash_ids = {1, 2, 3, 4, 5}},
  };
  InProcessOptions options;
  InProcessDetail detail;

  PdCase() {
    options.engines = 3;
    options.progress = false;
    options.model.prefill_ms_per_token = 1.0;
    options.model.decode_ms_base = 5;
    options.model.decode_ms_per_seq = 0;
    options.model.kv_transfer_ms_per_block = 0.02;
    options.detail = &detail;
  }
};

TEST(InProcessTest, DisaggregatedFlow) {
  PdCase c;
  c.options.pd = PdSplit{.prefill = 1, .decode = 2};
  auto r = replay_in_process(c.trace, "cache_aware", c.options);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->errors, 0u);
  EXPECT_EQ(r->split_requests, 1u);
  const auto& e = c.detail.engines;
  const auto& q = c.detail.requests;
  // Only the long prompt went through the prefill engine.
  EXPECT_EQ(e[0].requests, 1u);
  EXPECT_EQ(q[0].prefill_engine, 0);
  EXPECT_EQ(q[1].prefill_engine, -1);
  EXPECT_EQ(q[2].prefill_engine, -1);
  EXPECT_EQ(q[0].engine, 2);
  EXPECT_EQ(q[1].engine, 1);
  EXPECT_EQ(q[2].engine, 2) << "the decode engine holding the prefix";
  // Who computed what: the prefill engine r0's prompt; the decode engines only what was not
  // split (r1 whole, r2's last 100 tokens), and engine 2 pulled r0's blocks.
  EXPECT_EQ(e[0].prefill_computed_tokens, 2048u);
  EXPECT_EQ(e[1].prefill_computed_tokens, 200u);
  EXPECT_EQ(e[2].prefill_computed_tokens, 100u);
  EXPECT_EQ(e[2].kv_blocks_pulled, 2048u / 16);
  EXPECT_EQ(e[1].kv_blocks_pulled + e[0].kv_blocks_pulled, 0u);
  // TTFT from the decode step: the prefill, then the pull (128 blocks x 0.02 ms).
  EXPECT_DOUBLE_EQ(q[0].prefill_done_ms, 2048);
  EXPECT_NEAR(q[0].first_token_ms, 2048 + 128 * 0.02, 1e-9);
  EXPECT_NEAR(q[1].first_token_ms, 100 + 200, 1e-9);
  EXPECT_NEAR(q[2].first_token_ms, 3000 + 100, 1e-9);
  std::vector<double> ttft = r->ttft_ms;
  std::sort(ttft.begin(), ttft.end());
  ASSERT_EQ(ttft.size(), 3u);
  EXPECT_NEAR(ttft[0], 100, 1e-9);
  EXPECT_NEAR(ttft[1], 200, 1e-9);
  EXPECT_NEAR(ttft[2], 2048 + 128 * 0.02, 1e-9);
  // ITL from the decode steps' tokens only: 3 + 399 + 1 intervals, each one decode step.
  ASSERT_EQ(r->itl_ms.size(), 403u);
  for (double v : r->itl_ms) EXPECT_NEAR(v, 5, 1e-9);
  // Hit ratio: prompt tokens computed nowhere; r2's 2048 held tokens, of 2048 + 200 + 2148.
  EXPECT_EQ(r->hit_tokens, 2048u);
  EXPECT_EQ(r->query_tokens, 2048u + 200 + 2148);
}

// The same requests aggregated: ITL is reported too (per-token events are always on), and hits
// follow the same rule.
TEST(InProcessTest, AggregatedReportsItl) {
  PdCase c;
  auto r = replay_in_process(c.trace, "cache_aware", c.options);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->split_requests, 0u);
  EXPECT_EQ(r->itl_ms.size(), 403u);
  EXPECT_EQ(r->query_tokens, 2048u + 200 + 2148);
  EXPECT_EQ(r->hit_tokens, 2048u) << "cache_aware keeps r2 with r0";
  for (const auto& q : c.detail.requests) EXPECT_EQ(q.prefill_engine, -1);
}

// Chunked prefill: a decode step taken while another request's prefill runs carries up to
// prefill_chunk_tokens of it, so r1's intervals under r0's prefill grow; disaggregated, r0's
// prefill runs on the prefill engine and r1 decodes undisturbed.
TEST(InProcessTest, PrefillChunksSlowAggregatedDecodeOnly) {
  PdCase agg, pd;
  // r1 starts first and decodes while r0 prefills.
  for (PdCase* c : {&agg, &pd}) {
    c->trace[0].timestamp_ms = 300;
    c->trace[1].timestamp_ms = 0;
    std::swap(c->trace[0], c->trace[1]);
    c->trace.pop_back();
    c->options.model.prefill_chunk_tokens = 64;
  }
  pd.options.pd = PdSplit{.prefill = 1, .decode = 2};
  agg.options.engines = 1;  // both on one engine
  auto a = replay_in_process(agg.trace, "round_robin", agg.options);
  auto d = replay_in_process(pd.trace, "round_robin", pd.options);
  ASSERT_TRUE(a && d);
  const double worst_a = *std::max_element(a->itl_ms.begin(), a->itl_ms.end());
  const double worst_d = *std::max_element(d->itl_ms.begin(), d->itl_ms.end());
  EXPECT_NEAR(worst_d, 5, 1e-9);
  EXPECT_NEAR(worst_a, 5 + 64 * 1.0, 1e-9);
}

TEST(InProcessTest, BadSplitIsAnError) {
  InProcessOptions o = small_fleet();
  o.pd = PdSplit{.prefill = 2, .decode = 6};  // 8 != 4 engines
  EXPECT_FALSE(replay_in_process(small_trace(), "round_robin", o));
}

TEST(InProcessTest, UnknownStrategyIsAnError) {
  auto r = replay_in_process(small_trace(), "no_such_strategy", small_fleet());
  EXPECT_FALSE(r);
}

}  // namespace
}  // namespace rolter::bench
