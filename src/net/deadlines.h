// Deadlines: one timer structure per event loop for the timeouts of its connections
// (net/timed_stream.h), in place of a kernel timer armed and cancelled around every operation.
//
// Entries live in what they time (no allocation once the heap has grown) and sit in a binary
// min-heap by deadline. One Asio timer per event loop is armed at the earliest deadline, and only
// re-armed when a new deadline comes before the armed one: a deadline pushed later on every
// request (the idle timeout of a keep-alive connection, an upstream's first-byte timeout) costs a
// heap update and no system call. When the timer fires, every entry whose deadline has passed is
// taken out and told so, and the timer is armed at the next one. With no deadline left the timer
// is cancelled, so a loop run to the end of its work still ends.
//
//   Deadlines& deadlines = Deadlines::of(executor);   // once per connection
//   deadlines.set(entry, now + 30s);                  // moves the entry's deadline
//   deadlines.remove(entry);                          // no deadline
//
// Thread-safety: one per io_context, used only by the thread that runs it. REQUIRES: that context
// is run by one thread (every worker's is).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <vector>

#include "net/asio_fwd.h"

namespace rolter {

class Deadlines : public asio::execution_context::service {
 public:
  using Clock = std::chrono::steady_clock;
  static inline asio::execution_context::id id;

  // A deadline, embedded in its owner. `expire(owner)` runs on the loop's thread once `at` has
  // passed, after the entry left the heap.
  struct Entry {
    static constexpr size_t kNone = static_cast<size_t>(-1);
    Clock::time_point at = Clock::time_point::max();
    size_t index = kNone;  // its place in the heap, kNone when not in it
    void (*expire)(void* owner) = nullptr;
    void* owner = nullptr;
    bool in_heap() const { return index != kNone; }
  };

  explicit Deadlines(asio::execution_context& context);

  // The Deadlines of the executor's context, created at the first call.
  static Deadlines& of(const asio::any_io_executor& executor);

  // Gives the entry the deadline `at`, adding it to the heap or moving it there.
  void set(Entry& entry, Clock::time_point at);
  // Takes the entry out of the heap; nothing if it is not in it.
  void remove(Entry& entry);
  // `to` takes `from`'s place in the heap (its owner moved). REQUIRES: `to` is not in the heap.
  void replace(Entry& from, Entry& to);

  size_t size() const { return heap_.size(); }
  // When the loop's timer is due, or max() when it is not armed.
  Clock::time_point armed_at() const { return armed_at_; }

 private:
  void shutdown() override;
  void arm();
  void disarm();
  void fire();
  void place(size_t index, Entry* entry);
  void sift_up(size_t index);
  void sift_down(size_t index);
  void erase_at(size_t index);

  std::vector<Entry*> heap_;
  std::optional<asio::steady_timer> timer_;  // created with the first executor that asks
  Clock::time_point armed_at_ = Clock::time_point::max();
};

}  // namespace rolter
