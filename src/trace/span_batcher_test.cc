#include "trace/span_batcher.h"

#include <gtest/gtest.h>

#include <chrono>

#include "trace/testing/proto_reader.h"

namespace rolter {
namespace {

using namespace std::chrono_literals;

Span a_span() {
  Span span;
  span.trace_id.bytes[0] = 1;
  span.span_id.bytes[0] = 2;
  span.name = "rolter.request";
  return span;
}

// The spans an encoded batch carries.
size_t spans_in(const std::string& body) {
  const auto resource_spans = testing::field(body, 1);
  const auto scope_spans = testing::field(resource_spans.bytes, 2);
  return testing::fields_numbered(scope_spans.bytes, 2).size();
}

struct Fixture {
  explicit Fixture(size_t queue_size) : queue(queue_size) {}
  SpanQueue queue;
  ManualClock clock;
  SpanBatcher batcher{queue, TraceResource{}, clock, {.max_batch = 4, .interval = 1000ms}};
};

TEST(SpanBatcher, ABatchGoesAfterTheIntervalOrWhenFull) {
  Fixture f(16);
  EXPECT_FALSE(f.batcher.next());  // nothing to send
  f.queue.try_push(a_span());
  f.queue.try_push(a_span());
  EXPECT_FALSE(f.batcher.next());  // not full, not yet due
  EXPECT_EQ(f.queue.size(), 2u);   // waiting spans stay in the queue, which bounds them
  f.clock.advance(999ms);
  EXPECT_FALSE(f.batcher.next());
  f.clock.advance(1ms);
  auto batch = f.batcher.next();
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch->spans, 2u);
  EXPECT_EQ(spans_in(batch->body), 2u);
  f.batcher.sent(*batch, true);
  EXPECT_EQ(f.batcher.exported_spans(), 2u);

  // Six more at once: a full batch of four goes at once, the other two a second later.
  for (int i = 0; i < 6; ++i) f.queue.try_push(a_span());
  batch = f.batcher.next();
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch->spans, 4u);
  EXPECT_FALSE(f.batcher.next());
  f.clock.advance(1000ms);
  batch = f.batcher.next();
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch->spans, 2u);
}

TEST(SpanBatcher, FlushSendsWhatWaits) {
  Fixture f(16);
  f.queue.try_push(a_span());
  auto batch = f.batcher.next(/*flush=*/true);
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch->spans, 1u);
}

// A dead collector: every batch fails, nothing is retried or kept, and once the queue is full the
// request path's spans are dropped and counted.
TEST(SpanBatcher, ADeadCollectorCostsBoundedMemoryAndEverySpanIsCounted) {
  Fixture f(8);
  uint64_t pushed = 0;
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 10; ++i) pushed += f.queue.try_push(a_span()) ? 1 : 0;
    f.clock.advance(1000ms);
    while (auto batch = f.batcher.next()) f.batcher.sent(*batch, false);
  }
  EXPECT_EQ(pushed, 5u * 8u);
  EXPECT_EQ(f.batcher.dropped_spans(), 5u * 2u);  // 10 offered, 8 fit, each round
  EXPECT_EQ(f.batcher.failed_spans(), 5u * 8u);
  EXPECT_EQ(f.batcher.failed_exports(), 5u * 2u);  // 8 spans = two batches of four
  EXPECT_EQ(f.batcher.exported_spans(), 0u);
  EXPECT_EQ(f.queue.size(), 0u);
}

TEST(SpanBatcher, DiscardCountsWhatWasWaiting) {
  Fixture f(8);
  for (int i = 0; i < 3; ++i) f.queue.try_push(a_span());
  EXPECT_FALSE(f.batcher.next());  // not yet due: they stay queued
  f.queue.try_push(a_span());
  f.queue.try_push(a_span());
  f.batcher.discard();
  EXPECT_EQ(f.batcher.failed_spans(), 5u);
  f.clock.advance(5s);
  EXPECT_FALSE(f.batcher.next());
}

}  // namespace
}  // namespace rolter
