// Fuzzes decode_kv_batch with what a KV-event publisher might send, and applies what decodes to a
// small index. Invariants: nothing crashes, throws or reads outside the input (ASan sees the input
// as an exact-size buffer); a failure has a message; the index never holds more than its bound; and
// a cleared index holds nothing.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "kv/block_keys.h"
#include "kv/kv_decode.h"
#include "kv/kv_index.h"

namespace {

constexpr size_t kMaxBlocks = 16;
constexpr uint32_t kBlockSize = 4;

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A copy of exactly `size` bytes, so a read past the end is a heap overflow ASan reports.
  const std::vector<uint8_t> bytes(data, data + size);
  const auto decoded = rolter::decode_kv_batch(bytes);
  if (!decoded) {
    check(!decoded.error().empty());
    return 0;
  }
  check(decoded->batch.events.size() + decoded->skipped_events <= size);

  rolter::KvIndex index(kMaxBlocks);
  index.apply(decoded->batch, kBlockSize);
  check(index.size() <= kMaxBlocks);
  std::vector<uint64_t> keys;
  for (const rolter::KvEventRecord& event : decoded->batch.events) {
    if (event.kind != rolter::KvEventRecord::Kind::kBlockStored) continue;
    keys.clear();
    rolter::kv_block_keys(event.stored.token_ids, kBlockSize,
                          rolter::kv_chain_seed(event.stored.lora_name), keys);
    check(index.leading_blocks(keys) <= keys.size());
  }
  index.apply(decoded->batch, kBlockSize);  // again, onto what the first left: refreshes, re-keys
  check(index.size() <= kMaxBlocks);
  index.clear();
  check(index.size() == 0);
  for (uint64_t key : keys) check(!index.contains(key));
  return 0;
}
