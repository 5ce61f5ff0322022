#include "limits/estimate.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace rolter {
namespace {

constexpr size_t kNpos = std::string_view::npos;

uint64_t saturating_add(uint64_t a, uint64_t b) {
  return a > std::numeric_limits<uint64_t>::max() - b ? std::numeric_limits<uint64_t>::max()
                                                      : a + b;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

size_t skip_spaces(std::string_view s, size_t i) {
  while (i < s.size() && is_space(s[i])) ++i;
  return i;
}

// REQUIRES: s[open] == '"'. The index of the closing quote, or npos.
size_t string_end(std::string_view s, size_t open) {
  size_t i = open + 1;
  while (i < s.size()) {
    const void* hit = std::memchr(s.data() + i, '"', s.size() - i);
    if (hit == nullptr) return kNpos;
    const size_t quote = static_cast<size_t>(static_cast<const char*>(hit) - s.data());
    size_t backslashes = 0;
    while (quote - backslashes > open + 1 && s[quote - backslashes - 1] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return quote;
    i = quote + 1;
  }
  return kNpos;
}

// The index just past the value starting at i, or npos when it does not end.
size_t skip_value(std::string_view s, size_t i) {
  if (i >= s.size()) return kNpos;
  if (s[i] == '"') {
    const size_t end = string_end(s, i);
    return end == kNpos ? kNpos : end + 1;
  }
  if (s[i] != '{' && s[i] != '[') {  // a number, true, false or null
    while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']' && !is_space(s[i])) ++i;
    return i;
  }
  size_t depth = 0;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '"') {
      i = string_end(s, i);
      if (i == kNpos) return kNpos;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && --depth == 0) {
      return i + 1;
    }
  }
  return kNpos;
}

// A value [begin, end) that is a plain non-negative integer of at most 19 digits.
std::optional<uint64_t> plain_integer(std::string_view value) {
  if (value.empty() || value.size() > 19) return std::nullopt;
  uint64_t v = 0;
  for (char c : value) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

bool is_cap_key(std::string_view key) {
  return key == "max_tokens" || key == "max_completion_tokens" || key == "max_output_tokens";
}

}  // namespace

uint64_t estimate_prompt_tokens(std::optional<uint64_t> engine_prompt_tokens, size_t body_bytes) {
  if (engine_prompt_tokens) return *engine_prompt_tokens;
  return (static_cast<uint64_t>(body_bytes) + 3) / 4;
}

uint64_t estimate_tokens(std::optional<uint64_t> engine_prompt_tokens, size_t body_bytes,
                         std::optional<uint64_t> output_cap, uint64_t default_output_tokens) {
  return saturating_add(estimate_prompt_tokens(engine_prompt_tokens, body_bytes),
                        output_cap.value_or(default_output_tokens));
}

double estimate_usd(uint64_t input_tokens, uint64_t output_tokens, double input_usd_per_million,
                    double output_usd_per_million) {
  return (static_cast<double>(input_tokens) * input_usd_per_million +
          static_cast<double>(output_tokens) * output_usd_per_million) /
         1e6;
}

std::optional<uint64_t> output_cap(std::string_view body) {
  size_t i = skip_spaces(body, 0);
  if (i >= body.size() || body[i] != '{') return std::nullopt;
  std::optional<uint64_t> cap;
  i = skip_spaces(body, i + 1);
  if (i < body.size() && body[i] == '}') return std::nullopt;
  while (i < body.size() && body[i] == '"') {
    const size_t key_end = string_end(body, i);
    if (key_end == kNpos) return std::nullopt;
    const std::string_view key = body.substr(i + 1, key_end - i - 1);
    i = skip_spaces(body, key_end + 1);
    if (i >= body.size() || body[i] != ':') return std::nullopt;
    const size_t value_begin = skip_spaces(body, i + 1);
    const size_t value_end = skip_value(body, value_begin);
    if (value_end == kNpos) return std::nullopt;
    if (is_cap_key(key)) {
      if (auto v = plain_integer(body.substr(value_begin, value_end - value_begin))) {
        cap = std::max(cap.value_or(0), *v);
      }
    }
    i = skip_spaces(body, value_end);
    if (i < body.size() && body[i] == '}') return cap;
    if (i >= body.size() || body[i] != ',') return std::nullopt;
    i = skip_spaces(body, i + 1);
  }
  return std::nullopt;
}

}  // namespace rolter
