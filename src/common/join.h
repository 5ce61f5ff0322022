// Joins names for messages and help text: join({"a", "b", "c"}) == "a, b, c".
//
// Thread-safety: a pure function.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace rolter {

inline std::string join(std::span<const std::string_view> names,
                        std::string_view separator = ", ") {
  std::string out;
  for (std::string_view name : names) {
    if (!out.empty()) out += separator;
    out += name;
  }
  return out;
}

}  // namespace rolter
