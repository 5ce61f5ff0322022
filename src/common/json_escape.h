// Appends a string as a JSON string literal (quotes included), escaping what JSON requires
// (RFC 8259 §7). REQUIRES: the value is valid UTF-8; multi-byte sequences are copied as they are.
//
// Thread-safety: pure function.
#pragma once

#include <string>
#include <string_view>

namespace rolter {

void append_json_string(std::string& out, std::string_view value);

inline std::string json_string(std::string_view value) {
  std::string out;
  append_json_string(out, value);
  return out;
}

}  // namespace rolter
