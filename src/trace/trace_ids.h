// The identifiers of W3C Trace Context (https://www.w3.org/TR/trace-context/): a 16-byte trace id
// and an 8-byte span id, as plain values with their lowercase hex form. An all-zero id is invalid
// by the specification; the generators never produce one.
//
//   TraceId trace = random_trace_id(random);
//   char hex[32];
//   write_hex(trace, hex);  // "4bf92f3577b34da6a3ce929d0e0e4736"
//
// Thread-safety: plain values and pure functions; the generators use the caller's Random.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "common/random.h"

namespace rolter {

template <size_t N>
struct TraceBytes {
  std::array<uint8_t, N> bytes{};

  bool is_zero() const {
    for (uint8_t b : bytes) {
      if (b != 0) return false;
    }
    return true;
  }
  friend bool operator==(const TraceBytes&, const TraceBytes&) = default;
};

using TraceId = TraceBytes<16>;
using SpanId = TraceBytes<8>;

// Writes the 2*N lowercase hex digits of `id` to `out` (no terminator).
template <size_t N>
void write_hex(const TraceBytes<N>& id, char* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < N; ++i) {
    out[2 * i] = kHex[id.bytes[i] >> 4];
    out[2 * i + 1] = kHex[id.bytes[i] & 0xf];
  }
}

// Random, never all-zero ids. A trace id's rightmost 7 bytes are random, as Trace Context level 2
// asks, so a sampler may read them as a uniform number (trace/sampler.h).
TraceId random_trace_id(Random& random);
SpanId random_span_id(Random& random);

}  // namespace rolter
