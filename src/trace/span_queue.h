// SpanQueue: the bounded queue between the request path, which finishes spans, and the exporter's
// thread, which sends them (`[tracing] max_queue`). A bounded multi-producer queue (Dmitry
// Vyukov's ring of sequenced cells): a push never blocks and never allocates; when the queue is
// full the span is dropped and counted, so a slow or dead collector costs a request nothing.
//
//   SpanQueue queue(2048);
//   queue.try_push(std::move(span));       // any worker thread; false = dropped (counted)
//   Span next;
//   while (queue.try_pop(next)) batch.push_back(std::move(next));  // the exporter's thread
//
// Thread-safety: try_push() and try_pop() from any threads at once; the counters from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "trace/span.h"

namespace rolter {

class SpanQueue {
 public:
  // REQUIRES: capacity >= 1.
  explicit SpanQueue(size_t capacity);
  SpanQueue(const SpanQueue&) = delete;
  SpanQueue& operator=(const SpanQueue&) = delete;

  // Moves `span` into the queue. When it is full, leaves `span` as it was, counts one drop and
  // returns false.
  bool try_push(Span&& span);
  // Moves the oldest span into `out`; false when the queue is empty.
  bool try_pop(Span& out);

  size_t capacity() const { return capacity_; }
  // Spans refused because the queue was full, since the start.
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  // Spans waiting (a snapshot; exact only when nothing pushes or pops meanwhile).
  size_t size() const;

 private:
  struct Cell {
    std::atomic<uint64_t> sequence;
    Span span;
  };

  const size_t capacity_;
  std::unique_ptr<Cell[]> cells_;
  // Producers and the consumer each on a cache line of their own.
  alignas(64) std::atomic<uint64_t> push_at_{0};
  alignas(64) std::atomic<uint64_t> pop_at_{0};
  alignas(64) std::atomic<uint64_t> dropped_{0};
};

}  // namespace rolter
