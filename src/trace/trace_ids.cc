#include "trace/trace_ids.h"

namespace rolter {
namespace {

void fill(uint8_t* out, size_t n, Random& random) {
  for (size_t i = 0; i < n; i += 8) {
    uint64_t word = random.next_u64();
    for (size_t k = i; k < n && k < i + 8; ++k) {
      out[k] = static_cast<uint8_t>(word);
      word >>= 8;
    }
  }
}

}  // namespace

TraceId random_trace_id(Random& random) {
  TraceId id;
  do {
    fill(id.bytes.data(), id.bytes.size(), random);
  } while (id.is_zero());
  return id;
}

SpanId random_span_id(Random& random) {
  SpanId id;
  do {
    fill(id.bytes.data(), id.bytes.size(), random);
  } while (id.is_zero());
  return id;
}

}  // namespace rolter
