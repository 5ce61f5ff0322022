#include "trace/span_batcher.h"

namespace rolter {

SpanBatcher::SpanBatcher(SpanQueue& queue, TraceResource resource, const Clock& clock,
                         Options options)
    : queue_(queue),
      resource_(std::move(resource)),
      clock_(clock),
      options_(options),
      last_batch_(clock.now()) {
  pending_.reserve(options_.max_batch);
}

void SpanBatcher::fill() {
  Span span;
  while (pending_.size() < options_.max_batch && queue_.try_pop(span)) {
    pending_.push_back(std::move(span));
  }
}

std::optional<SpanBatcher::Batch> SpanBatcher::next(bool flush) {
  fill();
  if (pending_.empty()) return std::nullopt;
  const auto now = clock_.now();
  const bool full = pending_.size() >= options_.max_batch;
  if (!full && !flush && now - last_batch_ < options_.interval) return std::nullopt;
  Batch batch{.body = encode_export_request(resource_, pending_), .spans = pending_.size()};
  pending_.clear();
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
  size_t gone = pending_.size();
  pending_.clear();
  Span span;
  while (queue_.try_pop(span)) ++gone;
  failed_spans_.fetch_add(gone, std::memory_order_relaxed);
}

}  // namespace rolter
