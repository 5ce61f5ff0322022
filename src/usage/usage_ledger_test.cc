#include "usage/usage_ledger.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

namespace rolter {
namespace {

UsageKey key_of(std::string key, std::string model, int64_t hour_ms = 3'600'000) {
  return UsageKey{hour_ms, std::move(key), "ml", "qwen3", std::move(model)};
}

TEST(UsageHourTest, RoundsDownToTheUtcHour) {
  const struct {
    int64_t at_ms;
    int64_t want;
  } kCases[] = {
      {0, 0},
      {3'599'999, 0},
      {3'600'000, 3'600'000},
      {1'767'229'199'999, 1'767'225'600'000},  // 2026-01-01 00:59:59.999Z
      {-1, -3'600'000},
  };
  for (const auto& c : kCases) EXPECT_EQ(usage_hour(c.at_ms), c.want) << c.at_ms;
}

TEST(UsageLedgerTest, SumsEachLineAndDrainsEverythingOnce) {
  UsageLedger ledger;
  ledger.add(key_of("ci", "a"),
             {.requests = 1, .input_tokens = 10, .output_tokens = 2, .usd = 0.5});
  ledger.add(key_of("ci", "a"), {.requests = 2,
                                 .input_tokens = 5,
                                 .cached_input_tokens = 4,
                                 .output_tokens = 1,
                                 .estimated = 1,
                                 .usd = 0.25});
  ledger.add(key_of("ci", "b"), {.requests = 1});
  ledger.add(key_of("ci", "a", 7'200'000), {.requests = 1});  // another hour, another line
  EXPECT_EQ(ledger.size(), 3u);

  auto rows = ledger.drain();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(ledger.size(), 0u);
  EXPECT_TRUE(ledger.drain().empty());
  const auto a = std::find_if(rows.begin(), rows.end(),
                              [](const UsageRow& r) { return r.key == key_of("ci", "a"); });
  ASSERT_NE(a, rows.end());
  EXPECT_EQ(a->counts, (UsageCounts{.requests = 3,
                                    .input_tokens = 15,
                                    .cached_input_tokens = 4,
                                    .output_tokens = 3,
                                    .estimated = 1,
                                    .usd = 0.75}));
}

TEST(UsageLedgerTest, KeysDifferingInAnyNameAreDifferentLines) {
  UsageLedger ledger;
  const UsageKey base = key_of("ci", "m");
  ledger.add(base, {.requests = 1});
  for (int field = 0; field < 4; ++field) {
    UsageKey other = base;
    std::string* names[] = {&other.key, &other.team, &other.route, &other.model};
    *names[field] += "x";
    ledger.add(other, {.requests = 1});
  }
  EXPECT_EQ(ledger.size(), 5u);
}

struct Drained {
  uint64_t requests = 0;
  uint64_t input_tokens = 0;
  size_t most_rows = 0;  // the most rows one drain returned
};

// kThreads threads add kAdds requests of 2 input tokens each, thread t with key `key_of(t)` to
// shard t, while this thread drains 100 times; then it drains what is left.
constexpr int kThreads = 4;
constexpr int kAdds = 20'000;
Drained add_while_draining(UsageLedger& ledger, UsageKey (*key_of_thread)(int)) {
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([&ledger, key_of_thread, t] {
      const UsageKey key = key_of_thread(t);
      for (int i = 0; i < kAdds; ++i) {
        ledger.add(key, {.requests = 1, .input_tokens = 2}, static_cast<size_t>(t));
      }
    });
  }
  Drained drained;
  auto take = [&] {
    const auto rows = ledger.drain();
    drained.most_rows = std::max(drained.most_rows, rows.size());
    for (const auto& row : rows) {
      drained.requests += row.counts.requests;
      drained.input_tokens += row.counts.input_tokens;
    }
  };
  for (int i = 0; i < 100; ++i) take();
  for (auto& w : workers) w.join();
  take();
  return drained;
}

// Workers add while a flusher drains: nothing is lost and nothing is counted twice.
TEST(UsageLedgerTest, AddsFromManyThreadsWhileDraining) {
  UsageLedger ledger;  // one shard: every thread adds to it
  const Drained d =
      add_while_draining(ledger, [](int t) { return key_of("k" + std::to_string(t), "m"); });
  EXPECT_EQ(d.requests, uint64_t{kThreads} * kAdds);
  EXPECT_EQ(d.input_tokens, 2 * uint64_t{kThreads} * kAdds);
}

// One shard per worker: a line several shards hold is one row after the drain, its counts summed.
TEST(UsageLedgerTest, ShardsHoldTheirOwnLinesAndDrainAsOne) {
  UsageLedger ledger(3);
  EXPECT_EQ(ledger.shards(), 3u);
  ledger.add(key_of("ci", "a"), {.requests = 1, .input_tokens = 10, .usd = 0.5}, 0);
  ledger.add(key_of("ci", "a"), {.requests = 2, .output_tokens = 4}, 1);
  ledger.add(key_of("ci", "a"), {.requests = 4, .cached_input_tokens = 3, .estimated = 1}, 5);
  ledger.add(key_of("ci", "b"), {.requests = 8}, 1);
  EXPECT_EQ(ledger.size(), 4u);  // "a" in three shards (5 is shard 2), "b" in one

  auto rows = ledger.drain();
  ASSERT_EQ(rows.size(), 2u);
  std::sort(rows.begin(), rows.end(),
            [](const UsageRow& x, const UsageRow& y) { return x.key.model < y.key.model; });
  EXPECT_EQ(rows[0].key, key_of("ci", "a"));
  EXPECT_EQ(rows[0].counts, (UsageCounts{.requests = 7,
                                         .input_tokens = 10,
                                         .cached_input_tokens = 3,
                                         .output_tokens = 4,
                                         .estimated = 1,
                                         .usd = 0.5}));
  EXPECT_EQ(rows[1].key, key_of("ci", "b"));
  EXPECT_EQ(rows[1].counts, (UsageCounts{.requests = 8}));
  EXPECT_EQ(ledger.size(), 0u);
  EXPECT_TRUE(ledger.drain().empty());
}

// Workers each add the same line to their own shard while a flusher drains: one row per drain.
TEST(UsageLedgerTest, ShardedAddsFromManyThreadsWhileDraining) {
  UsageLedger ledger(kThreads);
  const Drained d = add_while_draining(ledger, [](int) { return key_of("k", "m"); });
  EXPECT_EQ(d.most_rows, 1u);
  EXPECT_EQ(d.requests, uint64_t{kThreads} * kAdds);
  EXPECT_EQ(d.input_tokens, 2 * uint64_t{kThreads} * kAdds);
}

}  // namespace
}  // namespace rolter
