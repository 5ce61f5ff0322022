// KV matching, the request's side (SPEC §6.8, §6.14): the request's block keys, and how much of
// its prompt one instance's KV index holds.
//
// RequestBlockKeys computes the request's chained block keys (kv/block_keys.h) lazily, once per
// block size, from ctx.token_ids, seeded by ctx.adapter (a LoRA adapter's blocks are keyed apart
// from the base model's, as the engine keeps them). match_kv() then counts the leading blocks an
// instance holds. A prompt without token ids, or shorter than one block, has no keys.
//
// Thread-safety: RequestBlockKeys belongs to one pick on one thread. Its keys live in a
// thread_local buffer that only grows, so after a thread's first pick at a given prompt size no
// key computation allocates; two RequestBlockKeys alive on one thread at once would share that
// buffer, so a pick makes exactly one.
//
//   RequestBlockKeys keys(ctx);
//   for (i...) if (auto m = match_kv(candidates[i].kv, keys)) score[i] = m->fraction();
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "balance/route_context.h"

namespace rolter {

struct KvResidency;

class RequestBlockKeys {
 public:
  // A prompt is keyed up to this many blocks (2M tokens at 16 per block): enough for any context
  // window, and a bound on one pick's work.
  static constexpr size_t kMaxBlocks = 1u << 17;

  explicit RequestBlockKeys(const RouteContext& ctx);
  RequestBlockKeys(const RequestBlockKeys&) = delete;
  RequestBlockKeys& operator=(const RequestBlockKeys&) = delete;

  // The keys of every full block for `block_size` (empty without token ids). Valid until the next
  // call with another block size.
  std::span<const uint64_t> keys(uint32_t block_size);
  // Tokens in the prompt (0 without token ids).
  size_t token_count() const { return tokens_.size(); }
  bool has_tokens() const { return !tokens_.empty(); }

 private:
  std::span<const uint32_t> tokens_;
  uint64_t seed_;
  uint32_t block_size_ = 0;  // of the keys in buffer_; 0 = none computed yet
  std::vector<uint64_t>& buffer_;
};

struct KvMatch {
  size_t held_blocks = 0;     // leading blocks the instance holds
  size_t request_blocks = 0;  // full blocks of the prompt (> 0)
  uint32_t block_size = 0;

  // The leading fraction of the prompt's blocks that is resident (SPEC §6.8's KV score).
  double fraction() const {
    return static_cast<double>(held_blocks) / static_cast<double>(request_blocks);
  }
};

// How much of the request the instance holds, or nullopt when that is unknown: no index (`kv`
// null), a stream that is not live, or a request with no full block.
std::optional<KvMatch> match_kv(const KvResidency* kv, RequestBlockKeys& keys);

// The request's tokens the instance would have to prefill, in thousands: all of them unless
// match_kv() knows better. Without token ids, the prompt's estimated size
// (RouteContext::prompt_ktokens()).
double uncached_ktokens(const RouteContext& ctx, const KvResidency* kv, RequestBlockKeys& keys);

}  // namespace rolter
