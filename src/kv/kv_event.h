// KvBatch: one batch of an engine's KV events, decoded (SPEC §6.8).
//
// vLLM publishes what its prefix cache holds as events: a block was stored (with the token ids it
// covers and the hash of its parent block), blocks were removed, or everything was cleared. Block
// hashes are the engine's own and opaque to rolter: an unsigned 64-bit integer, or a byte string,
// which is folded to 64 bits (EngineBlockHash) so both can be keys of one map.
//
// Plain values; produced by decode_kv_batch() (kv/kv_decode.h), applied by KvIndex::apply()
// (kv/kv_index.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rolter {

// The engine's hash of one block, as rolter keys it: the integer itself, or a 64-bit hash of a
// byte-string hash.
using EngineBlockHash = uint64_t;

struct KvBlockStored {
  std::vector<EngineBlockHash> block_hashes;  // consecutive blocks of one sequence, in order
  // The block just before the first of block_hashes; nullopt when they start a sequence.
  std::optional<EngineBlockHash> parent_block_hash;
  std::vector<uint32_t> token_ids;  // block_hashes.size() * block_size of them
  uint32_t block_size = 0;
  std::string lora_name;  // empty for the base model
  std::string medium;     // "GPU", "CPU", ...; empty when the engine left it out
};

struct KvBlockRemoved {
  std::vector<EngineBlockHash> block_hashes;
  std::string medium;
};

struct KvAllBlocksCleared {};

struct KvEventRecord {
  enum class Kind : uint8_t { kBlockStored, kBlockRemoved, kAllBlocksCleared };
  Kind kind = Kind::kAllBlocksCleared;
  KvBlockStored stored;    // kBlockStored only
  KvBlockRemoved removed;  // kBlockRemoved only
};

struct KvBatch {
  double ts = 0;  // engine time, seconds
  std::vector<KvEventRecord> events;
  std::optional<int64_t> data_parallel_rank;
};

}  // namespace rolter
