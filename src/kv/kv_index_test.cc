// KvIndex: chaining from parents, removal, clearing, the LRU bound, agreement with the keys a pick
// computes, concurrent readers; and its two hash tables against a reference map.
#include "kv/kv_index.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "kv/block_keys.h"
#include "kv/kv_index_tables.h"

namespace rolter {
namespace {

constexpr uint32_t kBlock = 4;

KvEventRecord stored(std::vector<EngineBlockHash> hashes, std::optional<EngineBlockHash> parent,
                     std::vector<uint32_t> tokens, uint32_t block_size = 0,
                     std::string lora_name = "") {
  KvEventRecord record;
  record.kind = KvEventRecord::Kind::kBlockStored;
  record.stored.block_hashes = std::move(hashes);
  record.stored.parent_block_hash = parent;
  record.stored.token_ids = std::move(tokens);
  record.stored.block_size = block_size;
  record.stored.lora_name = std::move(lora_name);
  return record;
}

KvEventRecord removed(std::vector<EngineBlockHash> hashes) {
  KvEventRecord record;
  record.kind = KvEventRecord::Kind::kBlockRemoved;
  record.removed.block_hashes = std::move(hashes);
  return record;
}

KvEventRecord cleared() { return KvEventRecord{}; }

KvBatch batch(std::vector<KvEventRecord> events) {
  KvBatch out;
  out.events = std::move(events);
  return out;
}

std::vector<uint32_t> tokens(uint32_t first, size_t n) {
  std::vector<uint32_t> out(n);
  std::iota(out.begin(), out.end(), first);
  return out;
}

std::vector<uint64_t> keys_of(const std::vector<uint32_t>& prompt, uint32_t block_size = kBlock,
                              const std::string& lora_name = "") {
  std::vector<uint64_t> keys;
  kv_block_keys(prompt, block_size, kv_chain_seed(lora_name), keys);
  return keys;
}

// Blocks 100, 101 (tokens 0..7) in one event, then 102 (tokens 8..11) chained from 101.
void store_three(KvIndex& index) {
  index.apply(batch({stored({100, 101}, std::nullopt, tokens(0, 8))}), kBlock);
  index.apply(batch({stored({102}, 101, tokens(8, 4))}), kBlock);
}

TEST(KvIndex, LeadingBlocksFollowTheChainFromParents) {
  KvIndex index(100);
  store_three(index);
  EXPECT_EQ(index.size(), 3u);
  EXPECT_EQ(index.leading_blocks(keys_of(tokens(0, 14))), 3u);  // 3 full blocks + 2 tokens
  EXPECT_EQ(index.leading_blocks(keys_of(tokens(0, 6))), 1u);
  EXPECT_EQ(index.leading_blocks(keys_of(tokens(0, 20))), 3u);  // a 4th block nobody stored
  EXPECT_EQ(index.leading_blocks(keys_of(tokens(4, 8))), 0u);   // block 2 alone is not a prefix
  EXPECT_EQ(index.leading_blocks({}), 0u);
  std::vector<uint32_t> diverged = tokens(0, 12);
  diverged[5] = 999;
  EXPECT_EQ(index.leading_blocks(keys_of(diverged)), 1u);
}

TEST(KvIndex, AdapterBlocksMatchOnlyTheAdaptersKeys) {
  KvIndex index(100);
  const KvApplyStats stats =
      index.apply(batch({stored({1, 2}, std::nullopt, tokens(0, 8), 0, "sql")}), kBlock);
  EXPECT_EQ(stats.stored, 2u);
  EXPECT_EQ(index.leading_blocks(keys_of(tokens(0, 8), kBlock, "sql")), 2u);
  EXPECT_EQ(index.leading_blocks(keys_of(tokens(0, 8))), 0u);
  index.apply(batch({stored({3}, 2, tokens(8, 4))}), kBlock);  // a child inherits the adapter
  EXPECT_EQ(index.leading_blocks(keys_of(tokens(0, 12), kBlock, "sql")), 3u);
}

TEST(KvIndex, UnknownParentIsSkipped) {
  KvIndex index(100);
  const KvApplyStats stats = index.apply(batch({stored({7, 8}, 6, tokens(4, 8))}), kBlock);
  EXPECT_EQ(stats.stored, 0u);
  EXPECT_EQ(stats.unchained, 2u);
  EXPECT_EQ(index.size(), 0u);
}

TEST(KvIndex, OnlyBlocksTheTokensCoverAreKeyed) {
  KvIndex index(100);
  const KvApplyStats stats =
      index.apply(batch({stored({1, 2, 3}, std::nullopt, tokens(0, 10))}), kBlock);
  EXPECT_EQ(stats.stored, 2u);
  EXPECT_EQ(stats.unchained, 1u);
  EXPECT_EQ(index.leading_blocks(keys_of(tokens(0, 12))), 2u);
}

TEST(KvIndex, TheEventsBlockSizeWinsOverTheConfiguredOne) {
  KvIndex index(100);
  index.apply(batch({stored({1, 2}, std::nullopt, tokens(0, 8), /*block_size=*/4)}), 16);
  EXPECT_EQ(index.leading_blocks(keys_of(tokens(0, 8), 4)), 2u);
  const KvApplyStats stats = index.apply(batch({stored({3}, std::nullopt, tokens(0, 8))}), 0);
  EXPECT_EQ(stats.unchained, 1u);  // no block size anywhere: nothing to key by
}

TEST(KvIndex, BlockRemovedDropsBlocksAndLeadingStopsThere) {
  KvIndex index(100);
  store_three(index);
  const std::vector<uint64_t> keys = keys_of(tokens(0, 12));
  const KvApplyStats stats = index.apply(batch({removed({101, 555})}), kBlock);
  EXPECT_EQ(stats.removed, 1u);  // 555 was never held
  EXPECT_EQ(index.size(), 2u);
  EXPECT_EQ(index.leading_blocks(keys), 1u);
  EXPECT_TRUE(index.contains(keys[2]));  // the child stays; it is unreachable as a prefix anyway
  // A child of the removed block can no longer be chained.
  EXPECT_EQ(index.apply(batch({stored({103}, 101, tokens(8, 4))}), kBlock).unchained, 1u);
}

TEST(KvIndex, AllBlocksClearedEmptiesTheIndexInOrder) {
  KvIndex index(100);
  store_three(index);
  const KvApplyStats stats =
      index.apply(batch({cleared(), stored({200}, std::nullopt, tokens(50, 4))}), kBlock);
  EXPECT_TRUE(stats.cleared);
  EXPECT_EQ(index.size(), 1u);
  EXPECT_EQ(index.leading_blocks(keys_of(tokens(0, 12))), 0u);
  EXPECT_EQ(index.leading_blocks(keys_of(tokens(50, 4))), 1u);
  index.clear();
  EXPECT_EQ(index.size(), 0u);
  EXPECT_FALSE(index.contains(keys_of(tokens(50, 4))[0]));
}

TEST(KvIndex, MaxBlocksHoldsAndTheMostRecentSurvive) {
  constexpr size_t kMax = 100;
  KvIndex index(kMax);
  size_t evicted = 0;
  for (uint32_t i = 0; i < 10 * kMax; ++i) {
    evicted +=
        index.apply(batch({stored({i}, std::nullopt, tokens(i * 10, kBlock))}), kBlock).evicted;
    ASSERT_LE(index.size(), kMax);
  }
  EXPECT_EQ(index.size(), kMax);
  EXPECT_EQ(evicted, 9 * kMax);
  for (uint32_t i = 0; i < 10 * kMax; ++i) {
    EXPECT_EQ(index.contains(keys_of(tokens(i * 10, kBlock))[0]), i >= 9 * kMax) << i;
  }
}

TEST(KvIndex, RestoringABlockMakesItTheMostRecent) {
  KvIndex index(2);
  index.apply(batch({stored({1}, std::nullopt, tokens(0, 4))}), kBlock);
  index.apply(batch({stored({2}, std::nullopt, tokens(10, 4))}), kBlock);
  index.apply(batch({stored({1}, std::nullopt, tokens(0, 4))}), kBlock);   // refresh
  index.apply(batch({stored({3}, std::nullopt, tokens(20, 4))}), kBlock);  // evicts 2
  EXPECT_TRUE(index.contains(keys_of(tokens(0, 4))[0]));
  EXPECT_FALSE(index.contains(keys_of(tokens(10, 4))[0]));
  EXPECT_TRUE(index.contains(keys_of(tokens(20, 4))[0]));
}

TEST(KvIndex, SetMaxBlocksEvictsTheLeastRecentAtOnce) {
  KvIndex index(10);
  for (uint32_t i = 0; i < 5; ++i) {
    index.apply(batch({stored({i}, std::nullopt, tokens(i * 10, 4))}), kBlock);
  }
  index.set_max_blocks(2);
  EXPECT_EQ(index.size(), 2u);
  EXPECT_TRUE(index.contains(keys_of(tokens(40, 4))[0]));
  EXPECT_FALSE(index.contains(keys_of(tokens(20, 4))[0]));
  index.set_max_blocks(0);
  EXPECT_EQ(index.max_blocks(), 1u);
  EXPECT_EQ(index.size(), 1u);
}

TEST(KvIndex, AKeyUnderTwoEngineHashesStaysUntilBothAreRemoved) {
  KvIndex index(10);
  index.apply(
      batch({stored({1}, std::nullopt, tokens(0, 4)), stored({2}, std::nullopt, tokens(0, 4))}),
      kBlock);
  const uint64_t key = keys_of(tokens(0, 4))[0];
  EXPECT_EQ(index.size(), 2u);
  index.apply(batch({removed({1})}), kBlock);
  EXPECT_TRUE(index.contains(key));
  index.apply(batch({removed({2})}), kBlock);
  EXPECT_FALSE(index.contains(key));
}

TEST(KvIndex, MemoryBytesCountsTheTables) {
  KvIndex index(100'000);
  const size_t empty = index.memory_bytes();
  for (uint32_t i = 0; i < 1000; ++i) {
    index.apply(batch({stored({i}, std::nullopt, tokens(i * 10, 4))}), kBlock);
  }
  // At least a node (24 bytes) and a slot in each table (8 + 4) per block.
  EXPECT_GE(index.memory_bytes(), empty + 1000 * 36);
  EXPECT_LE(index.memory_bytes(), empty + 1000 * 200);
}

TEST(KvIndex, AFullIndexCostsFortyBytesABlock) {
  constexpr size_t kMax = 10'000;
  KvIndex index(kMax);
  for (uint32_t i = 0; i < 3 * kMax; i += 8) {
    index.apply(batch({stored({i, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6, i + 7}, std::nullopt,
                              tokens(i * 4, 32))}),
                kBlock);
  }
  EXPECT_EQ(index.size(), kMax);
  // A 24-byte node, and 4/3 slots of 8 + 4 bytes: the slab and tables stop growing at the bound.
  EXPECT_LE(index.memory_bytes(), kMax * 40 + 1024);
}

// One writer stores a chain of 8 blocks in one batch and removes it in the next; a reader must see
// all 8 or none, never a batch half applied.
TEST(KvIndex, ReadersSeeWholeBatchesWhileAWriterApplies) {
  KvIndex index(64);
  const std::vector<uint32_t> prompt = tokens(0, 8 * kBlock);
  const std::vector<uint64_t> keys = keys_of(prompt);
  const KvBatch store = batch({stored({1, 2, 3, 4, 5, 6, 7, 8}, std::nullopt, prompt)});
  const KvBatch remove = batch({removed({1, 2, 3, 4, 5, 6, 7, 8})});
  std::atomic<bool> done{false};
  std::atomic<size_t> torn{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      while (!done.load(std::memory_order_acquire)) {
        const size_t held = index.leading_blocks(keys);
        if (held != 0 && held != keys.size()) torn.fetch_add(1);
        if (index.size() > index.max_blocks()) torn.fetch_add(1);
      }
    });
  }
  for (int i = 0; i < 20'000; ++i) {
    index.apply(store, kBlock);
    index.apply(remove, kBlock);
  }
  done.store(true, std::memory_order_release);
  for (std::thread& reader : readers) reader.join();
  EXPECT_EQ(torn.load(), 0u);
  EXPECT_EQ(index.size(), 0u);
}

// The open-addressing tables against std::unordered_map, through many inserts and deletes (the
// deletes shift entries back, the easy place for a probing bug), with the key 0 among them.
class KvIndexTables : public testing::TestWithParam<size_t> {};

// Limit 0 doubles without bound; 1500 caps the slots at 2001, which the entries outgrow one slot at
// a time, so both the doubling and the not-a-power-of-two sizes are exercised.
INSTANTIATE_TEST_SUITE_P(Limits, KvIndexTables, testing::Values(0, 1500));

TEST_P(KvIndexTables, KeySetAgreesWithAReferenceMap) {
  std::mt19937_64 random(7);
  KvKeySet counts;
  counts.set_limit(GetParam());
  std::unordered_map<uint64_t, uint32_t> reference;
  for (int step = 0; step < 200'000; ++step) {
    const uint64_t key = random() % 3000 == 0 ? 0 : random() % 5000 * 0x10001;  // dense collisions
    if (random() % 3 != 0) {
      counts.add(key);
      ++reference[key];
    } else if (reference.count(key) != 0) {
      counts.remove(key);
      if (--reference[key] == 0) reference.erase(key);
    }
    if (step % 1000 == 0) {
      for (uint64_t k = 0; k < 5000; ++k) {
        ASSERT_EQ(counts.contains(k * 0x10001), reference.count(k * 0x10001) != 0) << step;
      }
    }
  }
}

TEST_P(KvIndexTables, EngineSlotsAgreeWithAReferenceMap) {
  std::mt19937_64 random(11);
  std::vector<KvNode> nodes;
  KvEngineSlots slots;
  slots.set_limit(GetParam());
  std::unordered_map<uint64_t, uint32_t> reference;  // engine hash -> node
  for (int step = 0; step < 100'000; ++step) {
    const uint64_t engine_hash = random() % 4000;  // small integers, as some engines send
    auto it = reference.find(engine_hash);
    if (it == reference.end()) {
      nodes.push_back(KvNode{engine_hash, 0, kKvNil, kKvNil});
      const auto node = static_cast<uint32_t>(nodes.size() - 1);
      slots.insert(node, nodes);
      reference[engine_hash] = node;
    } else {
      slots.erase(it->second, nodes);
      reference.erase(it);
    }
    if (step % 1000 == 0) {
      for (uint64_t h = 0; h < 4000; ++h) {
        auto ref = reference.find(h);
        ASSERT_EQ(slots.find(h, nodes), ref == reference.end() ? kKvNil : ref->second) << step;
      }
    }
  }
}

}  // namespace
}  // namespace rolter
