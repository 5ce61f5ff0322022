// decode_kv_batch: reads the msgpack payload of one vLLM KV-event message (SPEC §6.8).
//
// Accepted shapes, all of which vLLM has published:
//   batch   [ts, [event...]] or [ts, [event...], dp_rank], or a map
//           {"ts": .., "events": [...], "data_parallel_rank": ..} (rank may be absent or nil)
//   events  array-like, tag first, trailing default fields may be left out:
//             ["BlockStored", block_hashes, parent_block_hash|nil, token_ids, block_size,
//              lora_id|nil, medium|nil, lora_name|nil]
//             ["BlockRemoved", block_hashes, medium|nil]
//             ["AllBlocksCleared"]
//           or maps with a "type" field and the same names, any default field left out.
//   hashes  unsigned 64-bit integers (negative ones are read as their two's complement), or byte
//           strings (msgpack bin or str), folded to 64 bits by a fixed hash.
// block_hashes must be present; every other event field may be left out (or nil) and reads as its
// default (no parent, no token ids, block_size 0 = the instance's configured size, empty strings);
// fields and keys beyond these are ignored. token_ids are integers in [0, 2^32).
// Unknown event types are skipped (counted in skipped_events), so a newer engine does not stop
// the stream; anything else malformed fails the whole batch.
//
// Thread-safety: pure function. No exceptions escape; an error is a short message that names
// what was wrong ("event 2: block_hashes is not an array").
//
//   auto batch = decode_kv_batch(payload);
//   if (!batch) { ++decode_errors; return; }
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <tl/expected.hpp>

#include "kv/kv_event.h"

namespace rolter {

struct DecodedKvBatch {
  KvBatch batch;
  size_t skipped_events = 0;  // events of a type this decoder does not know
};

tl::expected<DecodedKvBatch, std::string> decode_kv_batch(std::span<const uint8_t> payload);

}  // namespace rolter
