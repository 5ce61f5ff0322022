#include "kv/block_keys.h"

#include <xxhash.h>

#include <bit>

namespace rolter {

// Tokens are hashed as little-endian 32-bit words, which on a little-endian host is their
// in-memory form, so a block is hashed in place with no copy. Every platform rolter builds for
// (x86-64, AArch64) is little-endian; a big-endian port would swap each word first.
static_assert(std::endian::native == std::endian::little,
              "kv_block_key hashes token ids in place as little-endian words");

uint64_t kv_chain_seed(std::string_view lora_name) {
  if (lora_name.empty()) return kKvBaseSeed;
  return XXH3_64bits_withSeed(lora_name.data(), lora_name.size(), kKvBaseSeed);
}

uint64_t kv_block_key(uint64_t previous, std::span<const uint32_t> block_tokens) {
  return XXH3_64bits_withSeed(block_tokens.data(), block_tokens.size_bytes(), previous);
}

void kv_block_keys(std::span<const uint32_t> tokens, size_t block_size, uint64_t seed,
                   std::vector<uint64_t>& out, size_t max_blocks) {
  if (block_size == 0) return;
  size_t blocks = tokens.size() / block_size;
  if (blocks > max_blocks) blocks = max_blocks;
  uint64_t key = seed;
  for (size_t i = 0; i < blocks; ++i) {
    key = kv_block_key(key, tokens.subspan(i * block_size, block_size));
    out.push_back(key);
  }
}

}  // namespace rolter
