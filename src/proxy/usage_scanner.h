// UsageScanner: token usage read from a relayed response body, without parsing it.
//
// The relay feeds it every chunk it forwards. It looks for the usage fields of the OpenAI
// (`prompt_tokens`, `completion_tokens`, `cached_tokens`) and Anthropic (`input_tokens`,
// `output_tokens`, `cache_read_input_tokens`, `cache_creation_input_tokens`) shapes,
// in plain JSON bodies and in SSE streams alike (the usage chunk, message_start/message_delta),
// keeping the last value seen of each. A field split across two chunks is still found: the tail
// of each chunk is carried over. Malformed or hostile input yields no numbers, never an error.
//
// Thread-safety: a value type used by one request.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/seam.h"

namespace rolter {

class UsageScanner {
 public:
  void feed(std::string_view chunk);

  // Every prompt token, cached or not: OpenAI's count includes the cached ones, Anthropic's
  // cache reads and writes are added to its input_tokens. nullopt when no input count was seen.
  std::optional<uint64_t> input_tokens() const;
  std::optional<uint64_t> output_tokens() const { return value(kOutput); }
  // The prompt tokens served from the engine's cache, a part of input_tokens().
  uint64_t cached_input_tokens() const;

 private:
  // The counters, each kept with a bit in seen_ (the scanner lives in every attempt's report, so
  // it stays small).
  enum Counter : uint8_t {
    kInput,         // prompt_tokens, input_tokens
    kOutput,        // completion_tokens, output_tokens
    kCachedWithin,  // cached_tokens: already counted in kInput
    kCacheRead,     // cache_read_input_tokens: apart from kInput
    kCacheWrite,    // cache_creation_input_tokens: apart from kInput
    kCounters,
  };

  void scan(std::string_view text);
  std::optional<uint64_t> value(Counter c) const {
    if ((seen_ & (1u << c)) == 0) return std::nullopt;
    return counts_[c];
  }

  // The longest match (29-byte key, 4 spaces, colon, 4 spaces, 18 digits, one byte after) fits.
  Seam<64> seam_;
  uint64_t counts_[kCounters] = {};
  uint8_t seen_ = 0;
};

}  // namespace rolter
