// PollSchedule: when one polled target is due, and whether what it last said is still fresh. The
// I/O-free core every periodic poller shares (the engine scraper, the LMCache poller, the health
// checker); each wraps it with what an outcome does to its own signals. Driven by an injected
// clock, so its tests step time by hand.
//
//   PollSchedule schedule(clock, timing);
//   schedule.check_stale();           // each turn of the loop
//   if (schedule.due()) {
//     schedule.begin();
//     ...poll...
//     ok ? schedule.succeed() : schedule.fail();
//   }
//
// A poll never overlaps the next: one still in flight when the next is due delays it.
//
// Thread-safety: one thread (the poller's loop).
#pragma once

#include <optional>

#include "common/clock.h"

namespace rolter {

struct PollTiming {
  Clock::Duration interval{};
  Clock::Duration timeout{};      // of one poll: connect, request and answer
  Clock::Duration stale_after{};  // since the last good poll; zero = an answer never goes stale

  bool operator==(const PollTiming&) const = default;
};

class PollSchedule {
 public:
  PollSchedule(const Clock& clock, PollTiming timing) : clock_(clock), timing_(timing) {}

  const PollTiming& timing() const { return timing_; }
  void set_timing(PollTiming timing) { timing_ = timing; }

  // True when no poll is in flight and `interval` has passed since the last one began.
  bool due() const;
  // A poll begins (before its connect).
  void begin();
  bool in_flight() const { return in_flight_; }

  // The outcome of the poll begun last. REQUIRES: in_flight(). Each returns true when it starts a
  // new run (the first good poll after none or after a failure; the first failure after a good
  // poll or at start), so the caller logs each change once.
  bool succeed();
  bool fail();
  // True, once, when the last good poll is older than stale_after: the answer is fresh no more.
  bool check_stale();
  // Forgets the poll in flight and the last answer: the target is no longer polled.
  void retire();

  bool fresh() const { return fresh_; }

 private:
  const Clock& clock_;
  PollTiming timing_;
  bool in_flight_ = false;
  bool fresh_ = false;    // the last poll succeeded and is not stale
  bool failing_ = false;  // the last outcome was a failure
  std::optional<Clock::TimePoint> last_begin_;
  Clock::TimePoint last_success_{};
};

}  // namespace rolter
