// Seam: lets a scanner find patterns that straddle the chunks of a stream, without buffering it.
//
// Each feed() hands the scanner the seam (the previous chunk's tail joined to this chunk's head)
// and then the chunk itself, so every pattern of at most kCarry bytes is seen whole at least once.
// A pattern wholly inside the carried tail is seen again; scanners must tolerate that (they keep
// the last value seen, or a flag).
//
//   Seam<64> seam;
//   seam.feed(chunk, [&](std::string_view text) { look_for_fields(text); });
//
// Thread-safety: a value type used by one stream.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string_view>

namespace rolter {

template <size_t kCarry>
class Seam {
 public:
  template <typename Scan>
  void feed(std::string_view chunk, Scan&& scan) {
    if (chunk.empty()) return;
    if (size_ > 0) {
      char seam[2 * kCarry];
      const size_t head = std::min(chunk.size(), kCarry);
      std::memcpy(seam, carry_, size_);
      std::memcpy(seam + size_, chunk.data(), head);
      scan(std::string_view(seam, size_ + head));
    }
    scan(chunk);
    if (chunk.size() >= kCarry) {
      std::memcpy(carry_, chunk.data() + chunk.size() - kCarry, kCarry);
      size_ = kCarry;
    } else {
      const size_t keep = std::min(size_, kCarry - chunk.size());
      std::memmove(carry_, carry_ + size_ - keep, keep);
      std::memcpy(carry_ + keep, chunk.data(), chunk.size());
      size_ = keep + chunk.size();
    }
  }

 private:
  char carry_[kCarry];
  size_t size_ = 0;
};

}  // namespace rolter
