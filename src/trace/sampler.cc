#include "trace/sampler.h"

namespace rolter {

bool sampled_by_ratio(const TraceId& trace_id, double ratio) {
  if (!(ratio > 0)) return false;
  if (ratio >= 1) return true;
  uint64_t random_part = 0;
  for (size_t i = 9; i < 16; ++i) random_part = random_part << 8 | trace_id.bytes[i];
  constexpr double kSpan = 72057594037927936.0;  // 2^56
  // Compared as integers: a 56-bit number does not always survive a trip through a double.
  const auto threshold = static_cast<uint64_t>(ratio * kSpan);
  return random_part < threshold;
}

bool should_sample(const std::optional<TraceParent>& parent, const TraceId& trace_id,
                   double ratio) {
  if (parent) return parent->sampled();
  return sampled_by_ratio(trace_id, ratio);
}

}  // namespace rolter
