#include "net/timed_stream.h"

namespace rolter {

TimedStream::TimedStream(TimedStream&& other) noexcept
    : socket_(std::move(other.socket_)),
      deadlines_(other.deadlines_),
      reactor_(other.reactor_),
      watch_(std::move(other.watch_)) {
  init();
  if (other.entry_.in_heap()) {
    deadlines_->replace(other.entry_, entry_);
  } else {
    entry_.at = other.entry_.at;
  }
}

void TimedStream::expires_at(Clock::time_point at) {
  if (deadlines_ == nullptr) deadlines_ = &Deadlines::of(socket_.get_executor());
  deadlines_->set(entry_, at);
}

void TimedStream::expires_never() {
  entry_.at = Clock::time_point::max();
  if (entry_.in_heap()) deadlines_->remove(entry_);
}

void TimedStream::expire(void* owner) {
  auto* stream = static_cast<TimedStream*>(owner);
  // With nothing pending, the next operation puts the passed deadline back (begin()).
  if (stream->pending_ == 0) return;
  stream->timed_out_ = true;
  stream->close();  // the pending operations end with operation_aborted, reported as timeout
}

}  // namespace rolter
