#include "trace/span_batcher.h"

namespace rolter {

SpanBatcher::SpanBatcher(SpanQueue& queue, TraceResource resource, const Clock& clock,
                         Options options)
    : queue_(queue),
      resource_(std::move(resource)),
      clock_(clock),
      options_(options),
      last_batch_(clock.now()) {}

std::optional<SpanBatcher::Batch> SpanBatcher::next(bool flush) {
  const size_t waiting = queue_.size();
  if (waiting == 0) return std::nullopt;
  const auto now = clock_.now();
  const bool full = waiting >= options_.max_batch;
  if (!full && !flush && now - last_batch_ < options_.interval) return std::nullopt;
  batch_.clear();
  Span span;
  while (batch_.size() < options_.max_batch && queue_.try_pop(span)) {
    batch_.push_back(std::move(span));
  }
  if (batch_.empty()) return std::nullopt;
  Batch batch{.body = encode_export_request(resource_, batch_), .spans = batch_.size()};
  batch_.clear();
  last_batch_ = now;
  return batch;
}

void SpanBatcher::sent(const Batch& batch, bool ok) {
  if (ok) {
    exported_.fetch_add(batch.spans, std::memory_order_relaxed);
  } else {
    failed_spans_.fetch_add(batch.spans, std::memory_order_relaxed);
    failed_exports_.fetch_add(1, std::memory_order_relaxed);
  }
}

void SpanBatcher::discard() {
  size_t gone = 0;
  Span span;
  while (queue_.try_pop(span)) ++gone;
  failed_spans_.fetch_add(gone, std::memory_order_relaxed);
}

}  // namespace rolter
