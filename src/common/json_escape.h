// Appends a string as a JSON string literal (quotes included), escaping what JSON requires
// (RFC 8259 §7).
//
//   append_json_string(out, route_name);         // text rolter itself holds: valid UTF-8
//   append_untrusted_json_string(out, path);     // bytes a client sent: anything at all
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace rolter {

// REQUIRES: the value is valid UTF-8; multi-byte sequences are copied as they are.
void append_json_string(std::string& out, std::string_view value);

// As append_json_string, for bytes that came from outside (a request's path or model): every byte
// that does not belong to a well-formed UTF-8 sequence (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF) becomes \ufffd, so the result is always valid JSON text.
void append_untrusted_json_string(std::string& out, std::string_view value);

inline std::string json_string(std::string_view value) {
  std::string out;
  append_json_string(out, value);
  return out;
}

}  // namespace rolter
