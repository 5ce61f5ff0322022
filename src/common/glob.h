// Glob matching for allow-lists: '*' matches any run of characters (including '/'), everything
// else matches itself. "fleet/*" matches every model of group "fleet"; "*" matches everything.
//
// Thread-safety: pure function.
#pragma once

#include <string_view>

namespace rolter {

inline bool glob_match(std::string_view pattern, std::string_view text) {
  size_t p = 0, t = 0;
  size_t star = std::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace rolter
