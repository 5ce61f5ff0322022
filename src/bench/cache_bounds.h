// What a trace allows, independent of any router: the ideal prefix-cache hit ratio (one
// unbounded cache shared by all engines) and the pooled-cache bound (one LRU cache holding the
// whole fleet's KV capacity). Both count in 512-token trace blocks with prefix semantics: block j
// of a request hits only if blocks 0..j all hit, and only full blocks are ever cached. Requests
// are taken in trace order and each one's blocks are cached as soon as it arrives.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "bench/trace.h"

namespace rolter::bench {

struct HitCount {
  uint64_t hit_tokens = 0;
  uint64_t prompt_tokens = 0;
  double ratio() const {
    return prompt_tokens == 0 ? 0.0 : static_cast<double>(hit_tokens) / prompt_tokens;
  }
};

// An unbounded cache: a block hits when the same id prefix was seen in an earlier request.
HitCount ideal_hit_ratio(std::span<const TraceRequest> trace);

// One LRU cache of `capacity_blocks` trace blocks. A request's blocks are touched deepest first,
// so under pressure a conversation loses its tail before its shared head (as vLLM evicts).
HitCount pooled_lru_hit_ratio(std::span<const TraceRequest> trace, size_t capacity_blocks);

}  // namespace rolter::bench
