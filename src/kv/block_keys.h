// Block keys: rolter's own chained key per full KV block (SPEC §6.8).
//
// The router cannot reproduce the engine's block hash, so it keys blocks by their content:
//   key_0 = H(seed, tokens of block 0),  key_i = H(key_{i-1}, tokens of block i)
// with H a seeded 64-bit hash (XXH3) of the block's token ids as little-endian 32-bit words. The
// seed is kKvBaseSeed for the base model and a hash of the adapter's name for a LoRA adapter, so
// equal text under different adapters never shares a key. Only full blocks have keys; a trailing
// partial block has none.
//
// The index computes keys from BlockStored events and a pick computes them from the request's
// token ids with the same function, so the two agree exactly.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace rolter {

inline constexpr uint64_t kKvBaseSeed = 0x726f6c7465726b76ULL;  // "rolterkv"

// The chain's starting value for `lora_name` (kKvBaseSeed when empty).
uint64_t kv_chain_seed(std::string_view lora_name);

// The key of one block that follows `previous` (a key, or the chain's seed for the first block).
uint64_t kv_block_key(uint64_t previous, std::span<const uint32_t> block_tokens);

// Appends the keys of every full block of `tokens` to `out`, chained from `seed`; at most
// `max_blocks` of them. Does not allocate when `out` has the capacity.
void kv_block_keys(std::span<const uint32_t> tokens, size_t block_size, uint64_t seed,
                   std::vector<uint64_t>& out, size_t max_blocks = SIZE_MAX);

}  // namespace rolter
