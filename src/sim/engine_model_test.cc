#include "sim/engine_model.h"

#include <gtest/gtest.h>

#include <numeric>

#include "sim/testing/model_events.h"
#include "tokenizer/tokenizer.h"

namespace rolter::sim {
namespace {

std::vector<uint32_t> words(std::string_view text) {
  std::vector<uint32_t> ids;
  tokenizer::tokenize(text, ids);
  return ids;
}

EngineModelParams small_params() {
  return {.kv_blocks = 64,
          .block_size = 4,
          .max_batch = 4,
          .prefill_ms_base = 1,
          .prefill_ms_per_token = 0.5,
          .decode_ms_base = 2,
          .decode_ms_per_seq = 1,
          .max_loras = 2,
          .lora_load_ms = 40};
}

TEST(EngineModel, SecondIdenticalPromptHitsTheCacheAndStartsSooner) {
  EngineModel model(small_params());
  const auto prompt = seq_tokens(1, 42);  // 10 full blocks + 2 tokens
  model.submit(0, {.id = 1, .tokens = prompt, .output_tokens = 3});
  const auto first = drain(model);
  const ModelEvent* t1 = find(first, 1, ModelEvent::Kind::kFirstToken);
  ASSERT_TRUE(t1);
  EXPECT_EQ(t1->cached_tokens, 0u);
  EXPECT_DOUBLE_EQ(t1->at_ms, 1 + 0.5 * 42);

  const double start = 1000;
  model.submit(start, {.id = 2, .tokens = prompt, .output_tokens = 3});
  const auto second = drain(model);
  const ModelEvent* t2 = find(second, 2, ModelEvent::Kind::kFirstToken);
  ASSERT_TRUE(t2);
  EXPECT_GE(t2->cached_tokens, 40u);
  EXPECT_DOUBLE_EQ(t2->at_ms - start, 1 + 0.5 * 2);
  EXPECT_LT(t2->at_ms - start, t1->at_ms);
  EXPECT_EQ(model.prefix_query_tokens(), 84u);
  EXPECT_EQ(model.prefix_hit_tokens(), 40u);
  EXPECT_EQ(model.running(), 0u);
  EXPECT_DOUBLE_EQ(model.cache_usage(), 0.0);
  EXPECT_DOUBLE_EQ(model.occupancy(), 10.0 / 64);
}

TEST(EngineModel, PrefillsRunOneAfterAnotherSoAHitShortensTheQueueBehindIt) {
  EngineModel model(small_params());
  // Two distinct 20-token prompts admitted at once: the second prefill starts when the first
  // ends (1 + 0.5 * 20 = 11 ms each).
  model.submit(0, {.id = 1, .tokens = seq_tokens(100, 20), .output_tokens = 1});
  model.submit(0, {.id = 2, .tokens = seq_tokens(200, 20), .output_tokens = 1});
  const auto events = drain(model);
  EXPECT_DOUBLE_EQ(find(events, 1, ModelEvent::Kind::kFirstToken)->at_ms, 11);
  EXPECT_DOUBLE_EQ(find(events, 2, ModelEvent::Kind::kFirstToken)->at_ms, 22);

  // The same two again, now cached (all 5 blocks of each): each prefill is 1 ms, so the second
  // request waits 1 ms instead of 11.
  model.submit(100, {.id = 3, .tokens = seq_tokens(100, 20), .output_tokens = 1});
  model.submit(100, {.id = 4, .tokens = seq_tokens(200, 20), .output_tokens = 1});
  const auto cached = drain(model);
  EXPECT_DOUBLE_EQ(find(cached, 3, ModelEvent::Kind::kFirstToken)->at_ms, 101);
  EXPECT_DOUBLE_EQ(find(cached, 4, ModelEvent::Kind::kFirstToken)->at_ms, 102);
}

TEST(EngineModel, SharedPrefixHitsTheBlocksItShares) {
  EngineModel model(small_params());
  const auto a = words("you are a helpful assistant answer briefly please . what is two plus two");
  const auto b = words("you are a helpful assistant answer briefly please . name a colour");
  model.submit(0, {.id = 1, .tokens = a, .output_tokens = 1});
  drain(model);
  model.submit(100, {.id = 2, .tokens = b, .output_tokens = 1});
  const auto events = drain(model);
  EXPECT_EQ(find(events, 2, ModelEvent::Kind::kFirstToken)->cached_tokens, 8u);
}

TEST(EngineModel, EmitsEveryTokenThenFinishes) {
  EngineModel model(small_params());
  model.submit(0, {.id = 7, .tokens = seq_tokens(1, 8), .output_tokens = 4});
  const auto events = drain(model);
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events[0].kind, ModelEvent::Kind::kFirstToken);
  EXPECT_EQ(events[0].tokens_emitted, 1u);
  for (size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(events[i].kind, ModelEvent::Kind::kToken);
    EXPECT_EQ(events[i].tokens_emitted, i + 1);
    // One running sequence: 2 + 1 * 1 ms between tokens.
    EXPECT_DOUBLE_EQ(events[i].at_ms - events[i - 1].at_ms, 3);
  }
  EXPECT_EQ(events[4].kind, ModelEvent::Kind::kFinished);
  EXPECT_EQ(events[4].at_ms, events[3].at_ms);
}

TEST(EngineModel, ZeroOutputTokensStillReportsFirstTokenAndFinish) {
  EngineModel model(small_params());
  model.submit(0, {.id = 1, .tokens = seq_tokens(1, 4), .output_tokens = 0});
  const auto events = drain(model);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].tokens_emitted, 0u);
  EXPECT_EQ(events[1].kind, ModelEvent::Kind::kFinished);
}

TEST(EngineModel, FullerBatchDecodesMoreSlowly) {
  auto decode_span = [](size_t batch) {
    EngineModel model(small_params());
    for (uint64_t id = 0; id < batch; ++id) {
      model.submit(0, {.id = id, .tokens = seq_tokens(1000 * id, 4), .output_tokens = 10});
    }
    const auto events = drain(model);
    return find(events, 0, ModelEvent::Kind::kFinished)->at_ms -
           find(events, 0, ModelEvent::Kind::kFirstToken)->at_ms;
  };
  EXPECT_DOUBLE_EQ(decode_span(1), 9 * 3.0);
  EXPECT_DOUBLE_EQ(decode_span(4), 9 * 6.0);
}

TEST(EngineModel, QueuesBeyondMaxBatch) {
  EngineModel model(small_params());
  for (uint64_t id = 0; id < 6; ++id) {
    model.submit(0, {.id = id, .tokens = seq_tokens(1000 * id, 4), .output_tokens = 2});
  }
  EXPECT_EQ(model.running(), 4u);
  EXPECT_EQ(model.waiting(), 2u);
  const auto events = drain(model);
  const ModelEvent* late = find(events, 5, ModelEvent::Kind::kFirstToken);
  ASSERT_TRUE(late);
  EXPECT_GT(late->queued_ms, 0);
  EXPECT_GE(late->at_ms, find(events, 0, ModelEvent::Kind::kFinished)->at_ms);
}

TEST(EngineModel, WaitsForKvRoomAndNeverEvictsARunningRequest) {
  auto params = small_params();
  params.kv_blocks = 4;
  EngineModel model(params);
  model.submit(0, {.id = 1, .tokens = seq_tokens(1, 12), .output_tokens = 50});  // 3 blocks
  model.submit(0, {.id = 2, .tokens = seq_tokens(100, 8), .output_tokens = 1});  // 2 blocks
  EXPECT_EQ(model.running(), 1u);
  EXPECT_EQ(model.waiting(), 1u);
  const auto hashes1 = model.kv_cache().chain_hashes(seq_tokens(1, 12), "");
  std::vector<ModelEvent> out;
  model.advance(20, out);
  for (uint64_t h : hashes1) EXPECT_TRUE(model.kv_cache().referenced(h));
  const auto events = drain(model);
  const ModelEvent* second = find(events, 2, ModelEvent::Kind::kFirstToken);
  ASSERT_TRUE(second);
  EXPECT_GE(second->at_ms, find(events, 1, ModelEvent::Kind::kFinished)->at_ms);
}

TEST(EngineModel, CancelReleasesAndAdmitsTheNext) {
  auto params = small_params();
  params.max_batch = 1;
  EngineModel model(params);
  model.submit(0, {.id = 1, .tokens = seq_tokens(1, 8), .output_tokens = 100});
  model.submit(0, {.id = 2, .tokens = seq_tokens(1, 8), .output_tokens = 1});
  EXPECT_EQ(model.waiting(), 1u);
  EXPECT_TRUE(model.cancel(5, 1));
  EXPECT_FALSE(model.cancel(5, 1));
  EXPECT_EQ(model.running(), 1u);
  const auto events = drain(model);
  EXPECT_EQ(find(events, 1, ModelEvent::Kind::kFinished), nullptr);
  EXPECT_EQ(find(events, 2, ModelEvent::Kind::kFirstToken)->cached_tokens, 8u);
}

// A sequence cancelled mid-prefill gives back the compute it has not used, when it is the last
// one scheduled: the next prefill starts at the cancel, not when the cancelled one would have
// ended. One scheduled before another keeps the other's time.
TEST(EngineModel, CancelMidPrefillFreesThePrefillComputeForTheNext) {
  EngineModel model(small_params());
  // 1 + 0.5 * 40 = 21 ms of prefill, cancelled at 5.
  model.submit(0, {.id = 1, .tokens = seq_tokens(100, 40), .output_tokens = 1});
  ASSERT_TRUE(model.cancel(5, 1));
  model.submit(5, {.id = 2, .tokens = seq_tokens(200, 20), .output_tokens = 1});
  const auto events = drain(model);
  const ModelEvent* t2 = find(events, 2, ModelEvent::Kind::kFirstToken);
  ASSERT_TRUE(t2);
  EXPECT_DOUBLE_EQ(t2->at_ms, 5 + 1 + 0.5 * 20);

  // Two scheduled one after another (21 ms each); the first is cancelled at 5: the second keeps
  // its time (21 + 21), and so the next one starts after it.
  EngineModel again(small_params());
  again.submit(0, {.id = 1, .tokens = seq_tokens(100, 40), .output_tokens = 1});
  again.submit(0, {.id = 2, .tokens = seq_tokens(300, 40), .output_tokens = 1});
  ASSERT_TRUE(again.cancel(5, 1));
  again.submit(5, {.id = 3, .tokens = seq_tokens(400, 20), .output_tokens = 1});
  const auto later = drain(again);
  EXPECT_DOUBLE_EQ(find(later, 2, ModelEvent::Kind::kFirstToken)->at_ms, 42);
  EXPECT_DOUBLE_EQ(find(later, 3, ModelEvent::Kind::kFirstToken)->at_ms, 42 + 11);
}

TEST(EngineModel, LoraMissCostsMoreThanAHit) {
  EngineModel model(small_params());
  model.submit(0, {.id = 1, .tokens = seq_tokens(1, 8), .output_tokens = 1, .adapter = "a"});
  auto events = drain(model);
  const ModelEvent miss = *find(events, 1, ModelEvent::Kind::kFirstToken);
  EXPECT_TRUE(miss.lora_miss);
  model.submit(100, {.id = 2, .tokens = seq_tokens(500, 8), .output_tokens = 1, .adapter = "a"});
  events = drain(model);
  const ModelEvent hit = *find(events, 2, ModelEvent::Kind::kFirstToken);
  EXPECT_FALSE(hit.lora_miss);
  EXPECT_DOUBLE_EQ((miss.at_ms - 0) - (hit.at_ms - 100), 40);
  // max_loras = 2: b and c push a out, so a misses again.
  model.submit(200, {.id = 3, .tokens = {}, .output_tokens = 1, .adapter = "b"});
  model.submit(200, {.id = 4, .tokens = {}, .output_tokens = 1, .adapter = "c"});
  model.submit(200, {.id = 5, .tokens = {}, .output_tokens = 1, .adapter = "a"});
  events = drain(model);
  EXPECT_TRUE(find(events, 5, ModelEvent::Kind::kFirstToken)->lora_miss);
  EXPECT_EQ(model.lora_misses(), 4u);
}

TEST(EngineModel, TimeScaleZeroAnswersAtAdmission) {
  auto params = small_params();
  params.time_scale = 0;
  EngineModel model(params);
  model.submit(3, {.id = 1, .tokens = seq_tokens(1, 8), .output_tokens = 5});
  EXPECT_EQ(model.next_event_ms(), std::optional<double>(3));
  for (const auto& e : drain(model)) EXPECT_EQ(e.at_ms, 3);
}

TEST(EngineModel, SameCallsGiveTheSameEvents) {
  auto run = [] {
    EngineModel model(small_params());
    std::vector<ModelEvent> out;
    for (uint64_t id = 0; id < 40; ++id) {
      const double now = static_cast<double>(id) * 3.5;
      model.advance(now, out);
      model.submit(now, {.id = id,
                         .tokens = seq_tokens(static_cast<uint32_t>(id % 3) * 100, 9 + id % 7),
                         .output_tokens = 1 + id % 5,
                         .adapter = id % 4 == 0 ? "x" : ""});
    }
    while (auto t = model.next_event_ms()) model.advance(*t, out);
    return out;
  };
  const auto a = run();
  const auto b = run();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].id, b[i].id);
    EXPECT_EQ(a[i].kind, b[i].kind);
    EXPECT_EQ(a[i].at_ms, b[i].at_ms);
    EXPECT_EQ(a[i].cached_tokens, b[i].cached_tokens);
  }
}

}  // namespace
}  // namespace rolter::sim
