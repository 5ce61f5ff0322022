// UsageScanner: token usage read from a relayed response body, without parsing it.
//
// The relay feeds it every chunk it forwards. It looks for the usage fields of the OpenAI
// (`prompt_tokens`, `completion_tokens`) and Anthropic (`input_tokens`, `output_tokens`) shapes,
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

  std::optional<uint64_t> input_tokens() const { return input_; }
  std::optional<uint64_t> output_tokens() const { return output_; }

 private:
  void scan(std::string_view text);

  // The longest match (19-byte key, 8 spaces, colon, 8 spaces, 18 digits, one byte after) fits.
  Seam<64> seam_;
  std::optional<uint64_t> input_;
  std::optional<uint64_t> output_;
};

}  // namespace rolter
