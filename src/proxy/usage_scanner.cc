#include "proxy/usage_scanner.h"

#include <algorithm>
#include <array>

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
      if (end >= field.key.size() &&
          text.substr(end - field.key.size(), field.key.size()) == field.key) {
        if (auto value = number_after(text, end)) (field.input ? input_ : output_) = *value;
        break;
      }
    }
    from = end;
  }
}

void UsageScanner::feed(std::string_view chunk) {
  seam_.feed(chunk, [this](std::string_view text) { scan(text); });
}

}  // namespace rolter
