// Progress on stderr for long replays: requests done / total, rate, ETA, at most every
// `interval` of wall time (and once at the end).
//
// Thread-safety: not thread-safe; one replay loop owns it.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace rolter::bench {

class Progress {
 public:
  Progress(std::string label, uint64_t total, bool enabled,
           std::chrono::milliseconds interval = std::chrono::seconds(2));

  // Cheap enough to call per request: it reads the clock only every 64 calls.
  void update(uint64_t done);
  // Prints the final line.
  void finish(uint64_t done);

 private:
  void print(uint64_t done);

  std::string label_;
  uint64_t total_;
  bool enabled_;
  std::chrono::milliseconds interval_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
  uint64_t calls_ = 0;
};

}  // namespace rolter::bench
