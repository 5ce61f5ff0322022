#include "trace/span_queue.h"

namespace rolter {

SpanQueue::SpanQueue(size_t capacity)
    : capacity_(capacity), cells_(std::make_unique<Cell[]>(capacity)) {
  for (size_t i = 0; i < capacity_; ++i) cells_[i].sequence.store(i, std::memory_order_relaxed);
}

bool SpanQueue::try_push(Span&& span) {
  uint64_t at = push_at_.load(std::memory_order_relaxed);
  for (;;) {
    Cell& cell = cells_[at % capacity_];
    const uint64_t sequence = cell.sequence.load(std::memory_order_acquire);
    const auto diff = static_cast<int64_t>(sequence - at);
    if (diff == 0) {
      // The cell is free for position `at`: claim the position, then fill the cell.
      if (push_at_.compare_exchange_weak(at, at + 1, std::memory_order_relaxed)) {
        cell.span = std::move(span);
        cell.sequence.store(at + 1, std::memory_order_release);
        return true;
      }
    } else if (diff < 0) {
      // The cell still holds the span of position at - capacity: full.
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return false;
    } else {
      at = push_at_.load(std::memory_order_relaxed);  // another producer took `at`
    }
  }
}

bool SpanQueue::try_pop(Span& out) {
  uint64_t at = pop_at_.load(std::memory_order_relaxed);
  for (;;) {
    Cell& cell = cells_[at % capacity_];
    const uint64_t sequence = cell.sequence.load(std::memory_order_acquire);
    const auto diff = static_cast<int64_t>(sequence - (at + 1));
    if (diff == 0) {
      if (pop_at_.compare_exchange_weak(at, at + 1, std::memory_order_relaxed)) {
        out = std::move(cell.span);
        cell.span = Span{};
        cell.sequence.store(at + capacity_, std::memory_order_release);
        return true;
      }
    } else if (diff < 0) {
      return false;  // empty
    } else {
      at = pop_at_.load(std::memory_order_relaxed);
    }
  }
}

size_t SpanQueue::size() const {
  const uint64_t pushed = push_at_.load(std::memory_order_relaxed);
  const uint64_t popped = pop_at_.load(std::memory_order_relaxed);
  return pushed > popped ? static_cast<size_t>(pushed - popped) : 0;
}

}  // namespace rolter
