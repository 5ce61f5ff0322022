// RouteContext: what the gateway read from one request for routing (SPEC §2, §5).
//
// A non-owning view: every string_view and span points into buffers owned by the request (see
// inspect/request_facts.h) and is valid only for the duration of that request. Built once per
// request on the worker thread that serves it and passed by const reference to balancers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace rolter {

class Explain;
struct DecisionVerdict;

struct RouteContext {
  // The x-session-id header; empty when absent.
  std::string_view session_key;
  // The conversation text, bounded to its first kPromptBound bytes.
  std::string_view prompt;
  // Byte length of the whole conversation text (not bounded).
  size_t prompt_len = 0;
  // 64-bit hash of the whole conversation: text plus the identity of images, tool calls and tool
  // results; of the raw body when the body could not be read as JSON of the expected shape.
  std::optional<uint64_t> prompt_digest;
  // Hash of the raw request body, when there is one.
  std::optional<uint64_t> body_hash;
  // Token ids from x-rolter-vllm-token-ids or a /v1/completions token-array prompt.
  std::optional<std::span<const uint32_t>> token_ids;
  // Set only for passthrough provider-group routes: the requested model name.
  std::string_view adapter;
  // Policy mode (SPEC §7): the session key found by the route's key chain (headers first, then
  // string body fields on the configured paths); empty when none, and always empty on other
  // strategies, which read session_key.
  std::string_view policy_session_key;
  // Policy mode: the decision service's verdict on this request (balance/decision_verdict.h);
  // null when the route asks none, or the call gave no vote.
  const DecisionVerdict* decision = nullptr;
  // Set only when the client sent `x-rolter-explain: 1`: strategies record why they picked what
  // they picked (balance/explain.h). Null otherwise, and then nothing is computed for it.
  Explain* explain = nullptr;

  // The prompt's size in thousands of tokens, as the latency models read it (SPEC §6.11): the
  // token count when the request carries token ids, else its byte length / 4 (about 4 bytes per
  // token: the usual rule of thumb for English text under BPE tokenizers).
  double prompt_ktokens() const {
    if (token_ids) return static_cast<double>(token_ids->size()) / 1000;
    return static_cast<double>(prompt_len) / 4 / 1000;
  }

  // 32 KiB: enough prefix for affinity decisions while bounding per-request memory and trie depth.
  static constexpr size_t kPromptBound = 32 * 1024;
};

}  // namespace rolter
