// Clock: the injected source of time.
//
// Thread-safety: SteadyClock is safe from any thread. ManualClock is for tests and virtual-time
// simulation; advance() and now() are atomic, so it may be read from several threads.
#pragma once

#include <atomic>
#include <chrono>

namespace rolter {

class Clock {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  using Duration = std::chrono::steady_clock::duration;
  virtual ~Clock() = default;
  virtual TimePoint now() const = 0;
};

class SteadyClock final : public Clock {
 public:
  TimePoint now() const override { return std::chrono::steady_clock::now(); }
};

// Time moves only when a test says so.
class ManualClock final : public Clock {
 public:
  TimePoint now() const override { return TimePoint(Duration(ticks_.load())); }
  void advance(Duration d) { ticks_.fetch_add(d.count()); }

 private:
  std::atomic<Duration::rep> ticks_{0};
};

// Process-wide SteadyClock.
inline const Clock& default_clock() {
  static const SteadyClock clock;
  return clock;
}

}  // namespace rolter
