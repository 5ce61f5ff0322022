// KV-event path costs: decoding a batch (both encodings), applying it, a prompt's block keys, the
// pick's leading_blocks lookup, and the index's bytes per million held blocks.
//
//   build/src/kv/kv_bench --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <numeric>
#include <vector>

#include "kv/block_keys.h"
#include "kv/kv_decode.h"
#include "kv/kv_index.h"

namespace rolter {
namespace {

using nlohmann::json;

constexpr uint32_t kBlockSize = 16;
constexpr int kStoredPerBatch = 16;
constexpr int kRemovedPerBatch = 4;

std::vector<uint32_t> prompt_tokens(size_t n, uint32_t first) {
  std::vector<uint32_t> tokens(n);
  std::iota(tokens.begin(), tokens.end(), first);
  return tokens;
}

// What a busy engine sends in one message: 16 BlockStored of one 16-token block each, chained,
// with 64-bit hashes, then 4 BlockRemoved of one block each.
std::vector<uint8_t> realistic_payload(bool map_events) {
  json events = json::array();
  uint64_t parent = 0x9000000000000000ULL;
  for (int i = 0; i < kStoredPerBatch; ++i) {
    const uint64_t hash = parent + 1;
    const std::vector<uint32_t> tokens = prompt_tokens(kBlockSize, 1000 + i * kBlockSize);
    if (map_events) {
      events.push_back({{"type", "BlockStored"},
                        {"block_hashes", {hash}},
                        {"parent_block_hash", parent},
                        {"token_ids", tokens},
                        {"block_size", kBlockSize},
                        {"medium", "GPU"}});
    } else {
      events.push_back(json::array({"BlockStored", json::array({hash}), parent, tokens, kBlockSize,
                                    nullptr, "GPU", nullptr}));
    }
    parent = hash;
  }
  for (int i = 0; i < kRemovedPerBatch; ++i) {
    const uint64_t hash = 0x8000000000000000ULL + i;
    if (map_events) {
      events.push_back({{"type", "BlockRemoved"}, {"block_hashes", {hash}}, {"medium", "GPU"}});
    } else {
      events.push_back(json::array({"BlockRemoved", json::array({hash}), "GPU"}));
    }
  }
  return json::to_msgpack(json::array({1722000000.25, events, 0}));
}

void BM_DecodeBatch(benchmark::State& state) {
  const std::vector<uint8_t> payload = realistic_payload(state.range(0) == 1);
  for (auto _ : state) {
    auto decoded = decode_kv_batch(payload);
    benchmark::DoNotOptimize(decoded);
  }
  state.SetItemsProcessed(state.iterations() * (kStoredPerBatch + kRemovedPerBatch));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(payload.size()));
  state.SetLabel(state.range(0) == 1 ? "map events" : "array-like events");
}
BENCHMARK(BM_DecodeBatch)->Arg(0)->Arg(1);

// One chained sequence of `blocks` blocks in one BlockStored, hashes from `first_hash`.
KvBatch sequence_batch(uint64_t first_hash, size_t blocks, uint32_t first_token) {
  KvEventRecord record;
  record.kind = KvEventRecord::Kind::kBlockStored;
  for (size_t i = 0; i < blocks; ++i) record.stored.block_hashes.push_back(first_hash + i);
  record.stored.token_ids = prompt_tokens(blocks * kBlockSize, first_token);
  KvBatch batch;
  batch.events.push_back(std::move(record));
  return batch;
}

// The realistic batch applied to a warm index of 100,000 blocks (its stores chain from a held
// parent; after the first round they are refreshes, which cost the same lookups and hashing).
void BM_ApplyBatch(benchmark::State& state) {
  KvIndex index(200'000);
  for (uint64_t i = 0; i < 100'000 / 8; ++i) index.apply(sequence_batch(i << 8, 8, i), kBlockSize);
  index.apply(sequence_batch(0x9000000000000000ULL, 1, 0), kBlockSize);
  const KvBatch decoded = decode_kv_batch(realistic_payload(false))->batch;
  if (index.apply(decoded, kBlockSize).stored != kStoredPerBatch) state.SkipWithError("unchained");
  for (auto _ : state) benchmark::DoNotOptimize(index.apply(decoded, kBlockSize));
  state.SetItemsProcessed(state.iterations() * (kStoredPerBatch + kRemovedPerBatch));
}
BENCHMARK(BM_ApplyBatch);

void BM_BlockKeys2000Tokens(benchmark::State& state) {
  const std::vector<uint32_t> tokens = prompt_tokens(2000, 1);
  std::vector<uint64_t> keys;
  keys.reserve(tokens.size() / kBlockSize);
  for (auto _ : state) {
    keys.clear();
    kv_block_keys(tokens, kBlockSize, kKvBaseSeed, keys);
    benchmark::DoNotOptimize(keys.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(keys.size()));
}
BENCHMARK(BM_BlockKeys2000Tokens);

// A 2,000-token prompt's 125 keys, all held, on an index of range(0) blocks.
void BM_LeadingBlocks125(benchmark::State& state) {
  const auto held = static_cast<size_t>(state.range(0));
  KvIndex index(held);
  const std::vector<uint32_t> prompt = prompt_tokens(2000, 1);
  for (uint64_t i = 0; index.size() + 125 < held; ++i) {
    index.apply(sequence_batch((i + 1) << 16, 64, static_cast<uint32_t>(i) * 7919), kBlockSize);
  }
  KvBatch batch = sequence_batch(1, 125, 1);
  index.apply(batch, kBlockSize);
  std::vector<uint64_t> keys;
  kv_block_keys(prompt, kBlockSize, kKvBaseSeed, keys);
  if (index.leading_blocks(keys) != keys.size()) state.SkipWithError("prompt not held");
  for (auto _ : state) benchmark::DoNotOptimize(index.leading_blocks(keys));
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(keys.size()));
}
BENCHMARK(BM_LeadingBlocks125)->Arg(10'000)->Arg(1'000'000);

// Bytes per million held blocks, with the index filled to range(0) blocks of a 1,000,000 bound.
void BM_MemoryPerMillionBlocks(benchmark::State& state) {
  const auto fill = static_cast<size_t>(state.range(0));
  size_t bytes = 0;
  size_t held = 0;
  for (auto _ : state) {
    KvIndex index(1'000'000);
    for (uint64_t i = 0; index.size() < fill; ++i) {
      index.apply(sequence_batch((i + 1) << 16, 8, static_cast<uint32_t>(i) * 7919), kBlockSize);
    }
    bytes = index.memory_bytes();
    held = index.size();
  }
  state.counters["held_blocks"] = static_cast<double>(held);
  state.counters["bytes_per_block"] = static_cast<double>(bytes) / static_cast<double>(held);
  state.counters["bytes_per_million_blocks"] =
      static_cast<double>(bytes) / static_cast<double>(held) * 1e6;
}
BENCHMARK(BM_MemoryPerMillionBlocks)
    ->Arg(300'000)
    ->Arg(1'000'000)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace rolter
