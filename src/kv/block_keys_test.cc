// kv_block_keys: the chain, its seeds, full blocks only, the cap, and no allocation into a vector
// that has the capacity.
#include "kv/block_keys.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstdint>
#include <numeric>
#include <vector>

namespace rolter {
namespace {

std::vector<uint32_t> iota_tokens(size_t n, uint32_t first = 1) {
  std::vector<uint32_t> tokens(n);
  std::iota(tokens.begin(), tokens.end(), first);
  return tokens;
}

TEST(KvBlockKeys, SeedIsTheBaseForNoAdapterAndAHashOfTheName) {
  EXPECT_EQ(kv_chain_seed(""), kKvBaseSeed);
  EXPECT_EQ(kv_chain_seed("sql-lora"), XXH3_64bits_withSeed("sql-lora", 8, kKvBaseSeed));
  EXPECT_NE(kv_chain_seed("sql-lora"), kv_chain_seed("chat-lora"));
}

TEST(KvBlockKeys, BlockKeyHashesTokensAsLittleEndianWords) {
  const std::vector<uint32_t> tokens = {0x04030201, 0x0000ff00};
  const uint8_t bytes[] = {0x01, 0x02, 0x03, 0x04, 0x00, 0xff, 0x00, 0x00};
  EXPECT_EQ(kv_block_key(42, tokens), XXH3_64bits_withSeed(bytes, sizeof(bytes), 42));
}

TEST(KvBlockKeys, KeysChainFromTheSeedOverFullBlocksOnly) {
  const std::vector<uint32_t> tokens = iota_tokens(10);
  std::vector<uint64_t> keys;
  kv_block_keys(tokens, 4, kKvBaseSeed, keys);
  ASSERT_EQ(keys.size(), 2u);  // the last 2 tokens are a partial block: no key
  const std::span<const uint32_t> all(tokens);
  EXPECT_EQ(keys[0], kv_block_key(kKvBaseSeed, all.subspan(0, 4)));
  EXPECT_EQ(keys[1], kv_block_key(keys[0], all.subspan(4, 4)));
}

TEST(KvBlockKeys, EqualBlocksAtDifferentPlacesOrSeedsHaveDifferentKeys) {
  const std::vector<uint32_t> tokens(8, 7);  // two equal blocks
  std::vector<uint64_t> base;
  std::vector<uint64_t> adapter;
  kv_block_keys(tokens, 4, kv_chain_seed(""), base);
  kv_block_keys(tokens, 4, kv_chain_seed("a"), adapter);
  ASSERT_EQ(base.size(), 2u);
  ASSERT_EQ(adapter.size(), 2u);
  EXPECT_NE(base[0], base[1]);
  EXPECT_NE(base[0], adapter[0]);
  EXPECT_NE(base[1], adapter[1]);
}

TEST(KvBlockKeys, AppendsAndStopsAtMaxBlocks) {
  const std::vector<uint32_t> tokens = iota_tokens(64);
  std::vector<uint64_t> all;
  kv_block_keys(tokens, 16, kKvBaseSeed, all);
  ASSERT_EQ(all.size(), 4u);
  std::vector<uint64_t> capped = {99};
  kv_block_keys(tokens, 16, kKvBaseSeed, capped, 3);
  EXPECT_EQ(capped, (std::vector<uint64_t>{99, all[0], all[1], all[2]}));
}

TEST(KvBlockKeys, ZeroBlockSizeOrShortPromptHasNoKeys) {
  const std::vector<uint32_t> tokens = iota_tokens(15);
  std::vector<uint64_t> keys;
  kv_block_keys(tokens, 0, kKvBaseSeed, keys);
  kv_block_keys(tokens, 16, kKvBaseSeed, keys);
  kv_block_keys({}, 16, kKvBaseSeed, keys);
  EXPECT_TRUE(keys.empty());
}

TEST(KvBlockKeys, WritesIntoReservedCapacityWithoutReallocating) {
  const std::vector<uint32_t> tokens = iota_tokens(2000);
  std::vector<uint64_t> keys;
  keys.reserve(125);
  const uint64_t* storage = keys.data();
  kv_block_keys(tokens, 16, kKvBaseSeed, keys);
  EXPECT_EQ(keys.size(), 125u);
  EXPECT_EQ(keys.data(), storage);
  EXPECT_EQ(keys.capacity(), 125u);
}

}  // namespace
}  // namespace rolter
