#include "trace/span_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace rolter {
namespace {

Span numbered(uint64_t n) {
  Span span;
  span.start_unix_nano = n;
  span.name = "s";
  return span;
}

TEST(SpanQueue, FirstInFirstOut) {
  SpanQueue queue(4);
  for (uint64_t i = 1; i <= 3; ++i) EXPECT_TRUE(queue.try_push(numbered(i)));
  EXPECT_EQ(queue.size(), 3u);
  Span out;
  for (uint64_t i = 1; i <= 3; ++i) {
    ASSERT_TRUE(queue.try_pop(out));
    EXPECT_EQ(out.start_unix_nano, i);
  }
  EXPECT_FALSE(queue.try_pop(out));
}

TEST(SpanQueue, AFullQueueDropsAndCounts) {
  SpanQueue queue(3);
  for (uint64_t i = 0; i < 3; ++i) EXPECT_TRUE(queue.try_push(numbered(i)));
  Span extra = numbered(99);
  extra.set("k", "v");
  EXPECT_FALSE(queue.try_push(std::move(extra)));
  EXPECT_FALSE(queue.try_push(numbered(100)));
  EXPECT_EQ(queue.dropped(), 2u);
  EXPECT_EQ(extra.attributes.size(), 1u);  // a refused span is left as it was
  Span out;
  ASSERT_TRUE(queue.try_pop(out));
  EXPECT_TRUE(queue.try_push(numbered(3)));  // room again, and the ring wraps
  EXPECT_EQ(queue.dropped(), 2u);
  for (uint64_t i = 1; i <= 3; ++i) {
    ASSERT_TRUE(queue.try_pop(out));
    EXPECT_EQ(out.start_unix_nano, i);
  }
}

// Producers on several threads and one consumer: every span is either delivered once or counted
// as dropped.
TEST(SpanQueue, ConcurrentProducersLoseNothingUncounted) {
  SpanQueue queue(64);
  constexpr int kThreads = 4;
  constexpr uint64_t kEach = 20000;
  std::atomic<bool> done{false};
  std::vector<uint64_t> seen(kThreads * kEach, 0);
  uint64_t popped = 0;
  std::thread consumer([&] {
    Span out;
    for (;;) {
      if (queue.try_pop(out)) {
        ++seen[out.start_unix_nano];
        ++popped;
      } else if (done.load()) {
        if (!queue.try_pop(out)) break;
        ++seen[out.start_unix_nano];
        ++popped;
      }
    }
  });
  std::vector<std::thread> producers;
  std::atomic<uint64_t> accepted{0};
  for (int t = 0; t < kThreads; ++t) {
    producers.emplace_back([&, t] {
      for (uint64_t i = 0; i < kEach; ++i) accepted += queue.try_push(numbered(t * kEach + i));
    });
  }
  for (auto& p : producers) p.join();
  done = true;
  consumer.join();
  EXPECT_EQ(popped, accepted.load());
  EXPECT_EQ(accepted.load() + queue.dropped(), kThreads * kEach);
  for (uint64_t count : seen) EXPECT_LE(count, 1u);
}

}  // namespace
}  // namespace rolter
