// PreemptTarget: a request dispatched from its route's queue that a request of a higher band with
// `preempt` may displace until its answer begins (SPEC §19).
//
// Two sides race for one decision, and an atomic settles it: the request, when its answer is
// about to begin (begin_answer()), and the queue, when a higher band's arrival finds the route
// full and picks it (claim()). Whichever comes first wins. A displaced request must not answer:
// it ends its attempt (stop() hurries that along, from the queue's side, outside its lock) and
// takes its place in the queue again; the slot it leaves goes to the arrival.
//
// Thread-safety: begin_answer(), displaced() and claim() may race from any threads; stop() is the
// implementation's (proxy/queue_gate.cc posts to the request's own worker).
#pragma once

#include <atomic>
#include <cstdint>

namespace rolter {

class PreemptTarget {
 public:
  virtual ~PreemptTarget() = default;

  // The request's side: its answer begins now, and it can no longer be displaced. False when it
  // was displaced first: it must not answer. Idempotent.
  bool begin_answer() {
    uint8_t expected = kOpen;
    return state_.compare_exchange_strong(expected, kAnswering, std::memory_order_acq_rel) ||
           expected == kAnswering;
  }
  bool displaced() const { return state_.load(std::memory_order_acquire) == kDisplaced; }
  // Neither answering nor displaced: it may still be displaced (the queue skips the others).
  bool open() const { return state_.load(std::memory_order_acquire) == kOpen; }

  // The queue's side: displaces the request if its answer has not begun. True: displaced now, and
  // the caller calls stop() once, outside its lock.
  bool claim() {
    uint8_t expected = kOpen;
    return state_.compare_exchange_strong(expected, kDisplaced, std::memory_order_acq_rel);
  }
  // After a successful claim(): makes the request end its attempt soon. Any thread.
  virtual void stop() = 0;

 private:
  static constexpr uint8_t kOpen = 0;
  static constexpr uint8_t kAnswering = 1;
  static constexpr uint8_t kDisplaced = 2;
  std::atomic<uint8_t> state_{kOpen};
};

}  // namespace rolter
