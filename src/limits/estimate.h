// What a request reserves at admission (SPEC §15): its token estimate, that estimate priced, and
// the output cap the request asked for.
//
//   estimate = prompt tokens + output cap
//     prompt tokens: the engine tokenizer's count when it ran, else ceil(body_bytes / 4)
//     output cap:    max_tokens / max_completion_tokens / max_output_tokens, else the configured
//                    default (limits.default_output_tokens, 1024)
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace rolter {

inline constexpr uint64_t kDefaultOutputTokens = 1024;

uint64_t estimate_prompt_tokens(std::optional<uint64_t> engine_prompt_tokens, size_t body_bytes);

uint64_t estimate_tokens(std::optional<uint64_t> engine_prompt_tokens, size_t body_bytes,
                         std::optional<uint64_t> output_cap,
                         uint64_t default_output_tokens = kDefaultOutputTokens);

// input * input price + output * output price, prices in USD per million tokens.
double estimate_usd(uint64_t input_tokens, uint64_t output_tokens, double input_usd_per_million,
                    double output_usd_per_million);

// The largest non-negative integer value of a top-level "max_tokens", "max_completion_tokens" or
// "max_output_tokens" member of a JSON object, without building a tree. It walks the top-level
// members and skips every value whole (strings with their escapes, nested objects and arrays),
// so the names inside strings or nested objects never match. Absent, null, negative, fractional
// or exponent values, a key spelt with escapes, and text that is not a JSON object give nullopt.
// The request inspector, which parses the body anyway, is the better place to read the cap; this
// serves callers that hold only the bytes. Linear in the body, allocation-free.
std::optional<uint64_t> output_cap(std::string_view body);

}  // namespace rolter
