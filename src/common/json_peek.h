// Peeking at a JSON value that follows a key, in text that is scanned rather than parsed (relayed
// bodies and SSE streams, chunk by chunk): `"key": 123` or `"key": "text"`.
//
// Whitespace around the colon is bounded (kMaxSpaces; engines write none), so every match fits a
// small carry between chunks (common/seam.h). A value that runs into the end of the text is not
// complete yet: it is reported as absent and found again once the next chunk joins it.
//
// Thread-safety: pure functions.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace rolter::json_peek {

inline constexpr size_t kMaxSpaces = 8;
// Counts never need more; longer digit runs are ignored rather than overflowing.
inline constexpr size_t kMaxDigits = 18;

inline size_t skip_spaces(std::string_view text, size_t pos) {
  const size_t limit = std::min(text.size(), pos + kMaxSpaces);
  while (pos < limit && (text[pos] == ' ' || text[pos] == '\t')) ++pos;
  return pos;
}

// The position of the value after a key that ends at `key_end` (past `:` and spaces), or npos.
inline size_t value_at(std::string_view text, size_t key_end) {
  size_t pos = skip_spaces(text, key_end);
  if (pos >= text.size() || text[pos] != ':') return std::string_view::npos;
  return skip_spaces(text, pos + 1);
}

// The unsigned integer after a key that ends at `key_end`, once complete.
inline std::optional<uint64_t> number_after(std::string_view text, size_t key_end) {
  size_t pos = value_at(text, key_end);
  if (pos == std::string_view::npos) return std::nullopt;
  uint64_t value = 0;
  size_t digits = 0;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
    if (++digits > kMaxDigits) return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(text[pos] - '0');
    ++pos;
  }
  if (digits == 0 || pos >= text.size()) return std::nullopt;
  return value;
}

// Whether the value after a key that ends at `key_end` is a non-empty string.
inline bool non_empty_string_after(std::string_view text, size_t key_end) {
  const size_t pos = value_at(text, key_end);
  return pos != std::string_view::npos && pos + 1 < text.size() && text[pos] == '"' &&
         text[pos + 1] != '"';
}

}  // namespace rolter::json_peek
