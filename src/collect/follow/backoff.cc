#include "collect/follow/backoff.h"

#include <algorithm>

namespace rolter {

std::chrono::microseconds Backoff::next() {
  const auto bound = std::chrono::duration_cast<std::chrono::microseconds>(ceiling_);
  const auto wait = std::chrono::microseconds(
      static_cast<int64_t>(random_.uniform_double() * static_cast<double>(bound.count())));
  ++failures_;
  ceiling_ = std::min(max_, ceiling_ * 2);
  return wait;
}

}  // namespace rolter
