#include "sim/kv_cache.h"

#include <gtest/gtest.h>

#include <numeric>

namespace rolter::sim {
namespace {

struct Recorder : KvEventSink {
  std::vector<KvEvent> events;
  void on_kv_events(double, std::span<const KvEvent> batch) override {
    events.insert(events.end(), batch.begin(), batch.end());
  }
};

std::vector<uint32_t> seq_tokens(uint32_t first, size_t n) {
  std::vector<uint32_t> out(n);
  std::iota(out.begin(), out.end(), first);
  return out;
}

TEST(KvCache, ChainsHashesOverFullBlocksOnly) {
  KvCache cache({.kv_blocks = 16, .block_size = 4});
  const auto tokens = seq_tokens(1, 10);
  const auto hashes = cache.chain_hashes(tokens, "");
  ASSERT_EQ(hashes.size(), 2u);  // the 2 trailing tokens are a partial block
  // A shared prefix gives shared leading hashes; a different first block changes every hash.
  auto other = tokens;
  other[5] = 999;
  const auto other_hashes = cache.chain_hashes(other, "");
  EXPECT_EQ(other_hashes[0], hashes[0]);
  EXPECT_NE(other_hashes[1], hashes[1]);
  other[0] = 999;
  EXPECT_NE(cache.chain_hashes(other, "")[1], hashes[1]);
  // An adapter starts its own chain.
  EXPECT_NE(cache.chain_hashes(tokens, "lora-a")[0], hashes[0]);
}

TEST(KvCache, HitIsTheLeadingRunOfResidentBlocks) {
  Recorder sink;
  KvCache cache({.kv_blocks = 16, .block_size = 4}, &sink);
  const auto tokens = seq_tokens(1, 12);
  const auto hashes = cache.chain_hashes(tokens, "");
  auto first = cache.acquire(0, hashes, tokens, "");
  ASSERT_TRUE(first);
  EXPECT_EQ(first->hit_blocks, 0u);
  ASSERT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(sink.events[0].kind, KvEvent::Kind::kBlockStored);
  EXPECT_EQ(sink.events[0].block_hashes, hashes);
  EXPECT_FALSE(sink.events[0].parent_block_hash);
  EXPECT_EQ(sink.events[0].token_ids, tokens);
  cache.release(*first);

  auto second = cache.acquire(1, hashes, tokens, "");
  ASSERT_TRUE(second);
  EXPECT_EQ(second->hit_blocks, 3u);
  EXPECT_EQ(sink.events.size(), 1u);  // nothing new stored

  // A prompt sharing one block stores the rest chained to that block.
  auto other = tokens;
  other[6] = 77;
  const auto other_hashes = cache.chain_hashes(other, "");
  auto third = cache.acquire(2, other_hashes, other, "");
  ASSERT_TRUE(third);
  EXPECT_EQ(third->hit_blocks, 1u);
  ASSERT_EQ(sink.events.size(), 2u);
  EXPECT_EQ(sink.events[1].parent_block_hash, std::optional<uint64_t>(hashes[0]));
  EXPECT_EQ(sink.events[1].token_ids.size(), 8u);
}

TEST(KvCache, EvictsOnlyUnreferencedBlocksLeastRecentlyUsedFirst) {
  Recorder sink;
  KvCache cache({.kv_blocks = 4, .block_size = 2}, &sink);
  const auto a = seq_tokens(100, 4);  // 2 blocks
  const auto b = seq_tokens(200, 4);  // 2 blocks
  const auto c = seq_tokens(300, 4);  // 2 blocks
  const auto ha = cache.chain_hashes(a, "");
  const auto hb = cache.chain_hashes(b, "");
  const auto hc = cache.chain_hashes(c, "");
  auto ta = cache.acquire(0, ha, a, "");
  auto tb = cache.acquire(0, hb, b, "");
  ASSERT_TRUE(ta && tb);
  // Full and everything referenced: c must wait rather than evict a running request's blocks.
  EXPECT_FALSE(cache.acquire(1, hc, c, ""));
  EXPECT_EQ(cache.resident_blocks(), 4u);
  cache.release(*tb);
  auto tc = cache.acquire(2, hc, c, "");
  ASSERT_TRUE(tc);
  for (uint64_t h : ha) EXPECT_TRUE(cache.referenced(h));
  for (uint64_t h : hb) EXPECT_FALSE(cache.contains(h));
  ASSERT_EQ(sink.events.back().kind, KvEvent::Kind::kBlockStored);
  const KvEvent& removed = sink.events[sink.events.size() - 2];
  EXPECT_EQ(removed.kind, KvEvent::Kind::kBlockRemoved);
  // The tail block of b entered the LRU first, so it went first.
  EXPECT_EQ(removed.block_hashes, (std::vector<uint64_t>{hb[1], hb[0]}));

  // Least recently used: release a, then c; a new 1-block prompt evicts a's tail, not c's.
  cache.release(*ta);
  cache.release(*tc);
  const auto d = seq_tokens(400, 2);
  ASSERT_TRUE(cache.acquire(3, cache.chain_hashes(d, ""), d, ""));
  EXPECT_FALSE(cache.contains(ha[1]));
  EXPECT_TRUE(cache.contains(hc[0]) && cache.contains(hc[1]));
}

TEST(KvCache, ClearDropsUnreferencedBlocksAndSaysSo) {
  Recorder sink;
  KvCache cache({.kv_blocks = 8, .block_size = 2}, &sink);
  const auto a = seq_tokens(1, 4);
  const auto b = seq_tokens(50, 4);
  auto ta = cache.acquire(0, cache.chain_hashes(a, ""), a, "");
  auto tb = cache.acquire(0, cache.chain_hashes(b, ""), b, "");
  cache.release(*ta);
  cache.clear(1);
  EXPECT_EQ(cache.resident_blocks(), 2u);  // b is still running
  EXPECT_EQ(sink.events.back().kind, KvEvent::Kind::kAllBlocksCleared);
}

}  // namespace
}  // namespace rolter::sim
