// EngineModel's prefill/decode disaggregation side: KV pulled from a prefill engine
// (kv_from_remote), blocks held for a pull (hold_kv), and chunked prefill slowing decode steps
// (prefill_chunk_tokens).
#include <gtest/gtest.h>

#include <numeric>
#include <set>

#include "sim/engine_model.h"

namespace rolter::sim {
namespace {

std::vector<uint32_t> seq_tokens(uint32_t first, size_t n) {
  std::vector<uint32_t> out(n);
  std::iota(out.begin(), out.end(), first);
  return out;
}

std::vector<ModelEvent> drain(EngineModel& model) {
  std::vector<ModelEvent> out;
  while (auto t = model.next_event_ms()) model.advance(*t, out);
  return out;
}

const ModelEvent* find(const std::vector<ModelEvent>& events, uint64_t id, ModelEvent::Kind kind) {
  for (const auto& e : events) {
    if (e.id == id && e.kind == kind) return &e;
  }
  return nullptr;
}

// The times of request `id`'s first token and every later token.
std::vector<double> token_times(const std::vector<ModelEvent>& events, uint64_t id) {
  std::vector<double> out;
  for (const auto& e : events) {
    if (e.id == id && e.kind != ModelEvent::Kind::kFinished) out.push_back(e.at_ms);
  }
  return out;
}

std::vector<double> intervals(const std::vector<double>& times) {
  std::vector<double> out;
  for (size_t i = 1; i < times.size(); ++i) out.push_back(times[i] - times[i - 1]);
  return out;
}

EngineModelParams params() {
  return {.kv_blocks = 64,
          .block_size = 4,
          .max_batch = 4,
          .prefill_ms_base = 1,
          .prefill_ms_per_token = 0.5,
          .decode_ms_base = 2,
          .decode_ms_per_seq = 1,
          .kv_transfer_ms_per_block = 0.25};
}

TEST(EngineModelRemoteKv, SkipsPrefillAndPaysTransferPerBlock) {
  EngineModel model(params());
  const auto prompt = seq_tokens(1, 42);  // 10 full blocks + 2 tokens
  model.submit(0, {.id = 1, .tokens = prompt, .output_tokens = 3, .kv_from_remote = true});
  const auto events = drain(model);
  const ModelEvent* first = find(events, 1, ModelEvent::Kind::kFirstToken);
  ASSERT_TRUE(first);
  EXPECT_DOUBLE_EQ(first->at_ms, 10 * 0.25);  // no prefill base, no per-token cost
  EXPECT_EQ(first->pulled_blocks, 10u);
  EXPECT_EQ(first->prompt_tokens, 42u);
  EXPECT_EQ(token_times(events, 1), (std::vector<double>{2.5, 2.5 + 3, 2.5 + 6}));
  EXPECT_EQ(model.prefill_computed_tokens(), 0u);
  EXPECT_EQ(model.kv_blocks_pulled(), 10u);
  // The pulled blocks are resident now: the same prompt computed here is a cache hit.
  EXPECT_DOUBLE_EQ(model.occupancy(), 10.0 / 64);
  model.submit(100, {.id = 2, .tokens = prompt, .output_tokens = 1});
  const ModelEvent* local = find(drain(model), 2, ModelEvent::Kind::kFirstToken);
  ASSERT_TRUE(local);
  EXPECT_EQ(local->cached_tokens, 40u);
  EXPECT_EQ(local->pulled_blocks, 0u);
  EXPECT_EQ(model.prefill_computed_tokens(), 2u);
}

TEST(EngineModelRemoteKv, ResidentBlocksAreNotPulled) {
  EngineModel model(params());
  auto prompt = seq_tokens(1, 42);
  model.submit(0, {.id = 1, .tokens = {prompt.begin(), prompt.begin() + 20}, .output_tokens = 1});
  drain(model);
  EXPECT_EQ(model.prefill_computed_tokens(), 20u);
  model.submit(100, {.id = 2, .tokens = prompt, .output_tokens = 1, .kv_from_remote = true});
  const ModelEvent* first = find(drain(model), 2, ModelEvent::Kind::kFirstToken);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->pulled_blocks, 5u);  // 10 full blocks, the first 5 resident
  EXPECT_EQ(first->cached_tokens, 20u);
  EXPECT_DOUBLE_EQ(first->at_ms - 100, 5 * 0.25);
  EXPECT_EQ(model.kv_blocks_pulled(), 5u);
  EXPECT_EQ(model.prefill_computed_tokens(), 20u);
}

TEST(EngineModelRemoteKv, TransferDoesNotOccupyThePrefillPipeline) {
  EngineModel model(params());
  model.submit(0, {.id = 1, .tokens = seq_tokens(100, 100), .output_tokens = 1});  // 51 ms
  model.submit(
      0, {.id = 2, .tokens = seq_tokens(500, 40), .output_tokens = 1, .kv_from_remote = true});
  model.submit(0, {.id = 3, .tokens = seq_tokens(900, 4), .output_tokens = 1});
  const auto events = drain(model);
  EXPECT_DOUBLE_EQ(find(events, 1, ModelEvent::Kind::kFirstToken)->at_ms, 51);
  EXPECT_DOUBLE_EQ(find(events, 2, ModelEvent::Kind::kFirstToken)->at_ms, 10 * 0.25);
  // Request 3 queues behind request 1's prefill only, not behind the transfer.
  EXPECT_DOUBLE_EQ(find(events, 3, ModelEvent::Kind::kFirstToken)->at_ms, 51 + 1 + 0.5 * 4);
}

TEST(EngineModelHeldKv, HeldBlocksStayReferencedUntilReleased) {
  EngineModelParams p = params();
  p.kv_blocks = 16;
  EngineModel model(p);
  const auto prompt = seq_tokens(1, 42);  // 10 blocks
  model.submit(0, {.id = 1, .tokens = prompt, .output_tokens = 1, .hold_kv = true});
  drain(model);
  EXPECT_EQ(model.running(), 0u);
  EXPECT_EQ(model.held(), 1u);
  auto held = model.held_block_ids(1);
  ASSERT_TRUE(held);
  ASSERT_EQ(held->ids.size(), 10u);
  EXPECT_EQ(held->hashes.size(), 10u);
  const std::set<uint32_t> distinct(held->ids.begin(), held->ids.end());
  EXPECT_EQ(distinct.size(), 10u);
  for (uint32_t id : held->ids) EXPECT_LT(id, 16u);
  EXPECT_DOUBLE_EQ(model.cache_usage(), 10.0 / 16);
  // A 10-block prompt cannot fit next to the held blocks: it waits instead of evicting them.
  model.submit(1, {.id = 2, .tokens = seq_tokens(1000, 40), .output_tokens = 1});
  EXPECT_TRUE(drain(model).empty());
  EXPECT_EQ(model.waiting(), 1u);
  EXPECT_TRUE(model.release_held(2, 1));
  EXPECT_FALSE(model.release_held(2, 1));
  EXPECT_FALSE(model.held_block_ids(1));
  EXPECT_EQ(model.waiting(), 0u);  // admitted at release
  ASSERT_TRUE(find(drain(model), 2, ModelEvent::Kind::kFinished));
}

TEST(EngineModelHeldKv, CancelReleasesAHold) {
  EngineModel model(params());
  model.submit(0, {.id = 7, .tokens = seq_tokens(1, 8), .output_tokens = 1, .hold_kv = true});
  drain(model);
  ASSERT_TRUE(model.held_block_ids(7));
  EXPECT_TRUE(model.cancel(10, 7));
  EXPECT_EQ(model.held(), 0u);
  EXPECT_DOUBLE_EQ(model.cache_usage(), 0.0);
}

// A short request decoding while a 100-token prompt is prefilled (3..54 ms): with chunked
// prefill its decode steps carry 8 prefill tokens (+4 ms) until that prefill is done.
std::vector<double> decode_intervals_during_long_prefill(size_t chunk, bool long_is_remote) {
  EngineModelParams p = params();
  p.prefill_chunk_tokens = chunk;
  EngineModel model(p);
  model.submit(0, {.id = 1, .tokens = seq_tokens(1, 4), .output_tokens = 12});  // prefill 3 ms
  model.submit(0, {.id = 2,
                   .tokens = seq_tokens(100, 100),
                   .output_tokens = 40,
                   .kv_from_remote = long_is_remote});
  return intervals(token_times(drain(model), 1));
}

TEST(EngineModelChunkedPrefill, DecodeStepsSlowOnlyWhileAPrefillRuns) {
  const auto chunked = decode_intervals_during_long_prefill(8, false);
  const auto plain = decode_intervals_during_long_prefill(0, false);
  ASSERT_EQ(chunked.size(), 11u);
  ASSERT_EQ(plain.size(), 11u);
  // Both sequences run: 2 + 1 * 2 = 4 ms without chunks.
  for (double d : plain) EXPECT_DOUBLE_EQ(d, 4);
  // Tokens at 3, 11, ..., 51: six full chunks of 8 tokens (0.5 ms each).
  for (size_t i = 0; i < 6; ++i) EXPECT_DOUBLE_EQ(chunked[i], 8) << i;
  // At 51 ms, 100 * 3 / 51 tokens are left: a partial chunk.
  EXPECT_NEAR(chunked[6], 4 + 0.5 * 100.0 * 3 / 51, 1e-9);
  // After 54 ms the prefill is done and the pace is the plain one again.
  for (size_t i = 7; i < chunked.size(); ++i) EXPECT_DOUBLE_EQ(chunked[i], 4) << i;
}

TEST(EngineModelChunkedPrefill, PulledKvCarriesNoChunks) {
  // A decode engine: the long prompt's KV is pulled, so the short request's pace stays steady.
  const auto pulled = decode_intervals_during_long_prefill(8, true);
  ASSERT_EQ(pulled.size(), 11u);
  for (double d : pulled) EXPECT_DOUBLE_EQ(d, 4);
}

TEST(EngineModelChunkedPrefill, ZeroIsTheUnchunkedModel) {
  // The default is 0, and gives the pace of decode_ms_base + decode_ms_per_seq * running.
  EXPECT_EQ(EngineModelParams{}.prefill_chunk_tokens, 0u);
  EngineModel model(params());
  model.submit(0, {.id = 1, .tokens = seq_tokens(1, 4), .output_tokens = 3});
  model.submit(0, {.id = 2, .tokens = seq_tokens(100, 100), .output_tokens = 1});
  const auto events = drain(model);
  EXPECT_EQ(token_times(events, 1), (std::vector<double>{3, 3 + 4, 3 + 8}));
  EXPECT_EQ(model.prefill_computed_tokens(), 104u);
}

std::vector<ModelEvent> mixed_run() {
  EngineModelParams p = params();
  p.prefill_chunk_tokens = 16;
  EngineModel model(p);
  std::vector<ModelEvent> out;
  for (uint64_t i = 0; i < 12; ++i) {
    const double at = static_cast<double>(i) * 3.5;
    model.submit(at, {.id = i,
                      .tokens = seq_tokens(static_cast<uint32_t>(i % 3) * 50, 20 + 7 * (i % 5)),
                      .output_tokens = 3 + i % 4,
                      .kv_from_remote = i % 3 == 1,
                      .hold_kv = i % 4 == 2});
    model.advance(at, out);
    if (i % 4 == 3) model.release_held(at, i - 1);
  }
  while (auto t = model.next_event_ms()) model.advance(*t, out);
  return out;
}

TEST(EngineModelChunkedPrefill, SameCallsGiveTheSameEvents) {
  const auto a = mixed_run();
  const auto b = mixed_run();
  ASSERT_EQ(a.size(), b.size());
  ASSERT_GT(a.size(), 30u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].id, b[i].id);
    EXPECT_EQ(a[i].kind, b[i].kind);
    EXPECT_EQ(a[i].at_ms, b[i].at_ms);  // bit for bit
    EXPECT_EQ(a[i].pulled_blocks, b[i].pulled_blocks);
    EXPECT_EQ(a[i].cached_tokens, b[i].cached_tokens);
  }
}

TEST(KvCacheBlockIds, SlotsAreDistinctAndReusedAfterEviction) {
  KvCache cache({.kv_blocks = 4, .block_size = 2});
  const auto a = seq_tokens(1, 6);  // 3 blocks
  const auto ha = cache.chain_hashes(a, "");
  auto ta = cache.acquire(0, ha, a, "");
  ASSERT_TRUE(ta);
  EXPECT_EQ(cache.block_ids(ha), (std::vector<uint32_t>{0, 1, 2}));
  cache.release(*ta);
  const auto b = seq_tokens(100, 6);
  const auto hb = cache.chain_hashes(b, "");
  ASSERT_TRUE(cache.acquire(1, hb, b, ""));
  // The never-used slot 3, and the two slots of a's evicted tail blocks (1 and 2).
  auto ids = cache.block_ids(hb);
  ASSERT_TRUE(ids);
  EXPECT_EQ(std::set<uint32_t>(ids->begin(), ids->end()), (std::set<uint32_t>{1, 2, 3}));
  EXPECT_EQ(cache.block_ids(std::span(ha).first(1)), (std::vector<uint32_t>{0}));
  EXPECT_FALSE(cache.block_ids(ha));  // a's tail was evicted
}

}  // namespace
}  // namespace rolter::sim
