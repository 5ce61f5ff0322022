#include "proxy/usage_scanner.h"

#include <algorithm>
#include <array>

#include "common/json_peek.h"

namespace rolter {
namespace {

struct Field {
  std::string_view key;  // with its quotes
  uint8_t counter;       // UsageScanner::Counter
};

// Counter numbers as in UsageScanner::Counter: input, output, cached within input, cache reads
// and cache writes (both apart from input).
constexpr std::array<Field, 7> kFields = {{
    {"\"prompt_tokens\"", 0},
    {"\"input_tokens\"", 0},
    {"\"completion_tokens\"", 1},
    {"\"output_tokens\"", 1},
    // OpenAI (prompt_tokens_details, input_tokens_details): part of the input count.
    {"\"cached_tokens\"", 2},
    // Anthropic: counted apart from input_tokens.
    {"\"cache_read_input_tokens\"", 3},
    {"\"cache_creation_input_tokens\"", 4},
}};

}  // namespace

void UsageScanner::scan(std::string_view text) {
  // Every key ends in `_tokens"`: find those, in text order, and see which key it closes.
  static constexpr std::string_view kSuffix = "_tokens\"";
  size_t from = 0;
  while ((from = text.find(kSuffix, from)) != std::string_view::npos) {
    const size_t end = from + kSuffix.size();
    for (const auto& field : kFields) {
      if (end >= field.key.size() &&
          text.substr(end - field.key.size(), field.key.size()) == field.key) {
        if (auto value = json_peek::number_after(text, end)) {
          counts_[field.counter] = *value;
          seen_ |= static_cast<uint8_t>(1u << field.counter);
        }
        break;
      }
    }
    from = end;
  }
}

std::optional<uint64_t> UsageScanner::input_tokens() const {
  constexpr uint8_t kAnyInput = (1u << kInput) | (1u << kCacheRead) | (1u << kCacheWrite);
  if ((seen_ & kAnyInput) == 0) return std::nullopt;
  return counts_[kInput] + counts_[kCacheRead] + counts_[kCacheWrite];
}

uint64_t UsageScanner::cached_input_tokens() const {
  const uint64_t cached = counts_[kCachedWithin] + counts_[kCacheRead];
  return std::min(cached, input_tokens().value_or(0));
}

void UsageScanner::feed(std::string_view chunk) {
  seam_.feed(chunk, [this](std::string_view text) { scan(text); });
}

}  // namespace rolter
