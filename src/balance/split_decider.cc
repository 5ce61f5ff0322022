#include "balance/split_decider.h"

#include <algorithm>
#include <optional>

#include "balance/kv_match.h"

namespace rolter {

SplitDecision decide_split(const RouteContext& ctx, std::span<const KvResidency* const> decode_kv,
                           uint64_t min_uncached_tokens) {
  SplitDecision decision;
  RequestBlockKeys keys(ctx);
  if (keys.has_tokens()) {
    const uint64_t tokens = keys.token_count();
    std::optional<uint64_t> fewest;
    for (const KvResidency* kv : decode_kv) {
      const auto match = match_kv(kv, keys);
      if (!match) continue;
      const uint64_t held = std::min<uint64_t>(
          tokens, static_cast<uint64_t>(match->held_blocks) * match->block_size);
      fewest = std::min(fewest.value_or(tokens), tokens - held);
    }
    decision.source = fewest ? PromptCount::kKvIndex : PromptCount::kTokens;
    decision.uncached_tokens = fewest.value_or(tokens);
  } else {
    decision.source = PromptCount::kBytes;
    decision.uncached_tokens = ctx.prompt_len / 4;
  }
  decision.disaggregate = decision.uncached_tokens >= min_uncached_tokens;
  return decision;
}

}  // namespace rolter
