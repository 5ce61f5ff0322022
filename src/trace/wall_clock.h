// WallClock: the injected source of calendar time, for what must be told in Unix time: span start
// and end times (OTLP's *_time_unix_nano) and the time part of a UUIDv7 request id. Durations on
// the request path use the steady Clock (common/clock.h); this one may jump with the system's.
//
// Thread-safety: SystemWallClock is safe from any thread; ManualWallClock's set() and advance()
// are atomic.
#pragma once

#include <time.h>

#include <atomic>
#include <cstdint>

namespace rolter {

class WallClock {
 public:
  virtual ~WallClock() = default;
  // Nanoseconds since the Unix epoch.
  virtual uint64_t unix_nanos() const = 0;
};

class SystemWallClock final : public WallClock {
 public:
  uint64_t unix_nanos() const override {
    timespec now{};
    ::clock_gettime(CLOCK_REALTIME, &now);
    return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
  }
};

// Time moves only when a test says so.
class ManualWallClock final : public WallClock {
 public:
  explicit ManualWallClock(uint64_t unix_nanos = 0) : nanos_(unix_nanos) {}
  uint64_t unix_nanos() const override { return nanos_.load(); }
  void set(uint64_t unix_nanos) { nanos_.store(unix_nanos); }
  void advance(uint64_t nanos) { nanos_.fetch_add(nanos); }

 private:
  std::atomic<uint64_t> nanos_;
};

// Process-wide SystemWallClock.
inline const WallClock& system_wall_clock() {
  static const SystemWallClock clock;
  return clock;
}

}  // namespace rolter
