#include "proxy/usage_scanner.h"

#include <algorithm>
#include <array>
#include <cstring>

namespace rolter {
namespace {

struct Field {
  std::string_view key;  // with its quotes
  bool input;
};

constexpr std::array<Field, 4> kFields = {{
    {"\"prompt_tokens\"", true},
    {"\"input_tokens\"", true},
    {"\"completion_tokens\"", false},
    {"\"output_tokens\"", false},
}};

// At most this much whitespace around the colon: keeps every match within 64 bytes (the carry),
// and real engines write none.
constexpr size_t kMaxSpaces = 8;
// Token counts never need more; longer digit runs are ignored rather than overflowing.
constexpr size_t kMaxDigits = 18;

size_t skip_spaces(std::string_view text, size_t pos) {
  const size_t limit = std::min(text.size(), pos + kMaxSpaces);
  while (pos < limit && (text[pos] == ' ' || text[pos] == '\t')) ++pos;
  return pos;
}

// Reads `: 123` after a key; nullopt when what follows is not a complete number.
std::optional<uint64_t> number_after(std::string_view text, size_t pos) {
  pos = skip_spaces(text, pos);
  if (pos >= text.size() || text[pos] != ':') return std::nullopt;
  pos = skip_spaces(text, pos + 1);
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

void UsageScanner::scan(std::string_view text) {
  // Every key ends in `_tokens"`: find those, in text order, and see which key it closes.
  static constexpr std::string_view kSuffix = "_tokens\"";
  size_t from = 0;
  while ((from = text.find(kSuffix, from)) != std::string_view::npos) {
    const size_t end = from + kSuffix.size();
    for (const auto& field : kFields) {
      if (end >= field.key.size() && text.substr(end - field.key.size(), field.key.size()) == field.key) {
        if (auto value = number_after(text, end)) (field.input ? input_ : output_) = *value;
        break;
      }
    }
    from = end;
  }
}

void UsageScanner::feed(std::string_view chunk) {
  if (chunk.empty()) return;
  // Only the seam needs joining: scan carry + the chunk's head, then the chunk itself. A match
  // wholly inside the carry was seen last time and sets the same value again.
  if (carry_size_ > 0) {
    char seam[2 * kCarry];
    const size_t head = std::min(chunk.size(), kCarry);
    std::memcpy(seam, carry_, carry_size_);
    std::memcpy(seam + carry_size_, chunk.data(), head);
    scan(std::string_view(seam, carry_size_ + head));
  }
  scan(chunk);
  if (chunk.size() >= kCarry) {
    std::memcpy(carry_, chunk.data() + chunk.size() - kCarry, kCarry);
    carry_size_ = kCarry;
  } else {
    const size_t keep = std::min(carry_size_, kCarry - chunk.size());
    std::memmove(carry_, carry_ + carry_size_ - keep, keep);
    std::memcpy(carry_ + keep, chunk.data(), chunk.size());
    carry_size_ = keep + chunk.size();
  }
}

}  // namespace rolter
