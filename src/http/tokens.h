// Small helpers for HTTP field values: case-insensitive ASCII comparison and comma-separated
// token lists (RFC 9110 §5.6.1), without allocating.
//
// Thread-safety: pure functions.
#pragma once

#include <string_view>

namespace rolter {

inline char lower_ascii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

inline bool iequals_ascii(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (lower_ascii(a[i]) != lower_ascii(b[i])) return false;
  }
  return true;
}

// The credentials of an `Authorization: Bearer <token>` value (scheme matched in any case);
// empty when the value is not a bearer credential.
inline std::string_view bearer_token(std::string_view authorization) {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.size() <= kBearer.size() ||
      !iequals_ascii(authorization.substr(0, kBearer.size()), kBearer)) {
    return {};
  }
  return authorization.substr(kBearer.size());
}

// `value` without leading and trailing spaces and tabs.
inline std::string_view trim_ows(std::string_view value) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  return value;
}

// Calls fn(token) for each non-empty, trimmed element of a comma-separated list. Parameters
// after a ';' stay part of the token (callers that care compare the whole element).
template <typename Fn>
void for_each_token(std::string_view list, Fn&& fn) {
  while (!list.empty()) {
    const size_t comma = list.find(',');
    const std::string_view element = trim_ows(list.substr(0, comma));
    if (!element.empty()) fn(element);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
}

// Calls fn(name, value) for each "Name: value\r\n" line of `lines` (fields the gateway rendered
// itself); a line without a colon is skipped.
template <typename Fn>
void for_each_field_line(std::string_view lines, Fn&& fn) {
  while (!lines.empty()) {
    const size_t end = lines.find("\r\n");
    const std::string_view line = lines.substr(0, end);
    if (const size_t colon = line.find(':'); colon != std::string_view::npos) {
      fn(line.substr(0, colon), trim_ows(line.substr(colon + 1)));
    }
    if (end == std::string_view::npos) break;
    lines.remove_prefix(end + 2);
  }
}

}  // namespace rolter
