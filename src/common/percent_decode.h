// Percent-decoding of URL parts: a model id such as "Qwen/Qwen3-8B" may arrive as
// "Qwen%2FQwen3-8B" in a path, a search term as "a+b%21" in a query.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace rolter {

// Decodes %XX escapes; a malformed escape is kept as is. With `plus_is_space` (query strings),
// '+' decodes to a space.
inline std::string percent_decode(std::string_view text, bool plus_is_space = false) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex(text[i + 1]) >= 0 && hex(text[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2])));
      i += 2;
    } else if (plus_is_space && text[i] == '+') {
      out.push_back(' ');
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

}  // namespace rolter
