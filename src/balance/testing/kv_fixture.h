// Helpers for tests and benchmarks that need an instance's KV residency: a KvResidency whose
// index holds given token sequences, as if its engine had published BlockStored for them.
// Header-only; tests and benchmarks only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "kv/kv_event.h"
#include "kv/kv_residency.h"

namespace rolter {

// Tokens first, first+1, ..., first+count-1: distinct sequences for distinct `first`.
inline std::vector<uint32_t> token_run(uint32_t first, size_t count) {
  std::vector<uint32_t> out(count);
  std::iota(out.begin(), out.end(), first);
  return out;
}

// Stores the full blocks of `tokens` in `kv` (one BlockStored with no parent; engine hashes
// hash_base, hash_base+1, ...) and marks the stream live.
inline void store_blocks(KvResidency& kv, std::span<const uint32_t> tokens, uint64_t hash_base,
                         uint32_t block_size = 16, const std::string& lora = "") {
  KvBatch batch;
  KvEventRecord event;
  event.kind = KvEventRecord::Kind::kBlockStored;
  const size_t blocks = tokens.size() / block_size;
  for (size_t b = 0; b < blocks; ++b) event.stored.block_hashes.push_back(hash_base + b);
  event.stored.token_ids.assign(tokens.begin(), tokens.begin() + blocks * block_size);
  event.stored.block_size = block_size;
  event.stored.lora_name = lora;
  batch.events.push_back(std::move(event));
  kv.block_size.store(block_size);
  kv.index.apply(batch, block_size);
  kv.state.store(KvStreamState::kLive);
}

}  // namespace rolter
