#include "trace/traceparent.h"

namespace rolter {
namespace {

// HEXDIGLC of the specification: uppercase is invalid.
int lower_hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Reads 2*N lowercase hex digits into `out`; false on any other character.
template <size_t N>
bool read_hex(std::string_view text, std::array<uint8_t, N>& out) {
  for (size_t i = 0; i < N; ++i) {
    const int hi = lower_hex(text[2 * i]);
    const int lo = lower_hex(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}

std::string_view trim(std::string_view value) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  return value;
}

}  // namespace

std::optional<TraceParent> parse_traceparent(std::string_view value) {
  value = trim(value);
  if (value.size() < kTraceparentLength) return std::nullopt;
  std::array<uint8_t, 1> version{};
  if (!read_hex(value.substr(0, 2), version) || version[0] == 0xff) return std::nullopt;
  // Version 00 is exactly its 55 characters; a later version may append fields after a '-'.
  if (version[0] == 0 ? value.size() != kTraceparentLength
                      : value.size() > kTraceparentLength && value[kTraceparentLength] != '-') {
    return std::nullopt;
  }
  if (value[2] != '-' || value[35] != '-' || value[52] != '-') return std::nullopt;
  TraceParent parent;
  std::array<uint8_t, 1> flags{};
  if (!read_hex(value.substr(3, 32), parent.trace_id.bytes) ||
      !read_hex(value.substr(36, 16), parent.parent_id.bytes) ||
      !read_hex(value.substr(53, 2), flags)) {
    return std::nullopt;
  }
  if (parent.trace_id.is_zero() || parent.parent_id.is_zero()) return std::nullopt;
  parent.flags = flags[0];
  return parent;
}

void format_traceparent(const TraceId& trace_id, const SpanId& span_id, bool sampled, char* out) {
  out[0] = '0';
  out[1] = '0';
  out[2] = '-';
  write_hex(trace_id, out + 3);
  out[35] = '-';
  write_hex(span_id, out + 36);
  out[52] = '-';
  out[53] = '0';
  out[54] = sampled ? '1' : '0';
}

}  // namespace rolter
