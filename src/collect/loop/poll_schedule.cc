#include "collect/loop/poll_schedule.h"

#include <utility>

namespace rolter {

bool PollSchedule::due() const {
  return !in_flight_ && (!last_begin_ || clock_.now() - *last_begin_ >= timing_.interval);
}

void PollSchedule::begin() {
  in_flight_ = true;
  last_begin_ = clock_.now();
}

bool PollSchedule::succeed() {
  in_flight_ = false;
  last_success_ = clock_.now();
  failing_ = false;
  return !std::exchange(fresh_, true);
}

bool PollSchedule::fail() {
  in_flight_ = false;
  fresh_ = false;
  return !std::exchange(failing_, true);
}

bool PollSchedule::check_stale() {
  if (!fresh_ || timing_.stale_after == Clock::Duration::zero() ||
      clock_.now() - last_success_ < timing_.stale_after) {
    return false;
  }
  fresh_ = false;
  return true;
}

void PollSchedule::retire() {
  in_flight_ = false;
  fresh_ = false;
}

}  // namespace rolter
