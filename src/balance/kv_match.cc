#include "balance/kv_match.h"

#include <algorithm>

#include "kv/block_keys.h"
#include "kv/kv_residency.h"

namespace rolter {
namespace {

std::vector<uint64_t>& key_buffer() {
  thread_local std::vector<uint64_t> buffer;
  return buffer;
}

}  // namespace

RequestBlockKeys::RequestBlockKeys(const RouteContext& ctx)
    : tokens_(ctx.token_ids.value_or(std::span<const uint32_t>())),
      seed_(kv_chain_seed(ctx.adapter)),
      buffer_(key_buffer()) {}

std::span<const uint64_t> RequestBlockKeys::keys(uint32_t block_size) {
  if (tokens_.empty() || block_size == 0) return {};
  if (block_size != block_size_) {
    buffer_.clear();
    kv_block_keys(tokens_, block_size, seed_, buffer_, kMaxBlocks);
    block_size_ = block_size;
  }
  return buffer_;
}

std::optional<KvMatch> match_kv(const KvResidency* kv, RequestBlockKeys& keys) {
  if (kv == nullptr || !kv->live()) return std::nullopt;
  const uint32_t block_size = kv->block_size.load(std::memory_order_relaxed);
  const std::span<const uint64_t> request = keys.keys(block_size);
  if (request.empty()) return std::nullopt;
  return KvMatch{.held_blocks = kv->index.leading_blocks(request),
                 .request_blocks = request.size(),
                 .block_size = block_size};
}

double uncached_ktokens(const RouteContext& ctx, const KvResidency* kv, RequestBlockKeys& keys) {
  if (!keys.has_tokens()) return ctx.prompt_ktokens();
  const size_t total = keys.token_count();
  size_t cached = 0;
  if (auto match = match_kv(kv, keys)) cached = match->held_blocks * match->block_size;
  return static_cast<double>(total - std::min(cached, total)) / 1000;
}

}  // namespace rolter
