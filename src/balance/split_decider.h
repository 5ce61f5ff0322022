// The split decision of a disaggregated route (SPEC §18): whether a request goes through a
// prefill worker before its decode worker, or straight to a decode (or "both") worker.
//
// A request is split when the prompt tokens its best decode candidate would still have to compute
// reach the route's min_uncached_tokens: a short prompt, or one whose prefix a decode engine
// already holds, costs less to prefill in place than to hand over. The count is exact whenever the
// gateway can make it so:
//   1. from the decode candidates' KV indexes, when at least one of them is live: the prompt's
//      tokens less the longest resident run of leading blocks on any of them;
//   2. else the prompt's token count (ids the client sent, or the engine's /tokenize);
//   3. else the prompt's bytes / 4, the last resort, which the caller counts in a metric.
//
//   boost::container::small_vector<const KvResidency*, 16> kv;  // the eligible decode candidates'
//   const SplitDecision d = decide_split(ctx, kv, route.min_uncached_tokens);
//   if (d.disaggregate) ... prefill first ...
//
// Thread-safety: a plain function of its arguments; it reads the KV indexes as match_kv() does
// (balance/kv_match.h) and computes the request's block keys in this thread's key buffer, so it
// must not run while another RequestBlockKeys is alive on the same thread.
#pragma once

#include <cstdint>
#include <span>

#include "balance/route_context.h"

namespace rolter {

struct KvResidency;

// Where the uncached count came from.
enum class PromptCount : uint8_t {
  kKvIndex,  // a live KV index of a decode candidate
  kTokens,   // the prompt's token ids, no live index
  kBytes,    // neither: bytes / 4
};

struct SplitDecision {
  bool disaggregate = false;
  uint64_t uncached_tokens = 0;  // on the best decode candidate, as counted
  PromptCount source = PromptCount::kBytes;
};

// `decode_kv[i]`: the KV index of one decode candidate that may serve the request (null: it has
// none). Split iff the uncached count reaches `min_uncached_tokens`.
SplitDecision decide_split(const RouteContext& ctx, std::span<const KvResidency* const> decode_kv,
                           uint64_t min_uncached_tokens);

}  // namespace rolter
