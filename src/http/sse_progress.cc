#include "http/sse_progress.h"

#include <algorithm>
#include <array>

namespace rolter {
namespace {

constexpr std::array<std::string_view, 7> kContentKeys = {
    "\"content\"",   "\"text\"",         "\"delta\"",   "\"reasoning_content\"",
    "\"arguments\"", "\"partial_json\"", "\"thinking\""};
constexpr std::string_view kSequenceKey = "\"sequence_number\"";
// Engines write no whitespace around the colon; a bound keeps every match inside the seam.
constexpr size_t kMaxSpaces = 8;
constexpr size_t kMaxDigits = 18;

size_t skip_spaces(std::string_view text, size_t pos) {
  const size_t limit = std::min(text.size(), pos + kMaxSpaces);
  while (pos < limit && (text[pos] == ' ' || text[pos] == '\t')) ++pos;
  return pos;
}

// The position after `:` following a key that ends at `pos`, or npos.
size_t after_colon(std::string_view text, size_t pos) {
  pos = skip_spaces(text, pos);
  if (pos >= text.size() || text[pos] != ':') return std::string_view::npos;
  return skip_spaces(text, pos + 1);
}

// `"key": "x` with a non-empty string value.
bool non_empty_string_at(std::string_view text, size_t key_end) {
  const size_t pos = after_colon(text, key_end);
  return pos != std::string_view::npos && pos + 1 < text.size() && text[pos] == '"' &&
         text[pos + 1] != '"';
}

std::optional<uint64_t> number_at(std::string_view text, size_t key_end) {
  size_t pos = after_colon(text, key_end);
  if (pos == std::string_view::npos) return std::nullopt;
  uint64_t value = 0;
  size_t digits = 0;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
    if (++digits > kMaxDigits) return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(text[pos] - '0');
    ++pos;
  }
  // A number running into the end of the text may continue in the next chunk.
  if (digits == 0 || pos >= text.size()) return std::nullopt;
  return value;
}

}  // namespace

void SseProgress::scan(std::string_view text) {
  // Every key ends in `"`; look at each closing quote that follows a key we know.
  for (size_t quote = text.find('"', 1); quote != std::string_view::npos;
       quote = text.find('"', quote + 1)) {
    const size_t end = quote + 1;
    const std::string_view before = text.substr(0, end);
    if (before.ends_with(kSequenceKey)) {
      if (auto n = number_at(text, end)) sequence_ = *n;
      continue;
    }
    if (content_) continue;
    for (auto key : kContentKeys) {
      if (before.ends_with(key) && non_empty_string_at(text, end)) {
        content_ = true;
        break;
      }
    }
  }
}

size_t complete_events_length(std::string_view text) {
  // Scan back for a line end that directly follows another line end.
  for (size_t i = text.size(); i >= 2; --i) {
    const char last = text[i - 1];
    if (last != '\n' && last != '\r') continue;
    const char before = text[i - 2];
    if (last == '\n' && before == '\n') return i;
    if (last == '\r' && before == '\r') return i;
    if (last == '\n' && before == '\r' && i >= 4 && text[i - 3] == '\n' && text[i - 4] == '\r') {
      return i;
    }
  }
  return 0;
}

bool SseProgress::feed(std::string_view chunk) {
  seam_.feed(chunk, [this](std::string_view text) { scan(text); });
  return content_;
}

}  // namespace rolter
