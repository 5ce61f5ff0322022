#include "collect/usage_flush/usage_flusher.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "collect/follow/testing/scripted_control_plane.h"
#include "collect/usage_flush/usage_post_sink.h"

namespace rolter {
namespace {

using std::chrono::milliseconds;

constexpr int64_t kHour = 3'600'000;

UsageKey key_of(std::string key, int64_t hour_ms = kHour) {
  return UsageKey{hour_ms, std::move(key), "", "r", "m"};
}

// A sink that records each batch and answers as told.
struct RecordingSink {
  std::mutex mu;
  std::condition_variable changed;
  std::vector<std::vector<UsageRow>> batches;
  bool accept = true;

  UsageFlusher::Sink sink() {
    return [this](std::vector<UsageRow>&& rows) {
      std::lock_guard lock(mu);
      batches.push_back(rows);
      changed.notify_all();
      return accept;
    };
  }
  bool wait_batches(size_t n) {
    std::unique_lock lock(mu);
    return changed.wait_for(lock, std::chrono::seconds(10), [&] { return batches.size() >= n; });
  }
};

uint64_t requests_in(const std::vector<UsageRow>& rows) {
  uint64_t n = 0;
  for (const auto& r : rows) n += r.counts.requests;
  return n;
}

TEST(UsageFlusherTest, OneBatchPerIntervalWhateverTheNumberOfRequests) {
  UsageLedger ledger;
  RecordingSink recorded;
  UsageFlusher flusher(ledger, recorded.sink(), {.interval = milliseconds(50)});
  for (int i = 0; i < 1000; ++i) ledger.add(key_of("k" + std::to_string(i % 3)), {.requests = 1});
  flusher.start();
  ASSERT_TRUE(recorded.wait_batches(1));
  flusher.stop();
  std::lock_guard lock(recorded.mu);
  EXPECT_EQ(recorded.batches[0].size(), 3u);  // one row per line, not per request
  EXPECT_EQ(requests_in(recorded.batches[0]), 1000u);
  EXPECT_EQ(flusher.flushes_ok(), recorded.batches.size());
}

TEST(UsageFlusherTest, EmptyIntervalsWriteNothing) {
  UsageLedger ledger;
  RecordingSink recorded;
  UsageFlusher flusher(ledger, recorded.sink(), {.interval = milliseconds(10)});
  EXPECT_TRUE(flusher.flush());
  flusher.start();
  flusher.stop();
  EXPECT_TRUE(recorded.batches.empty());
  EXPECT_EQ(flusher.flushes_ok(), 0u);
}

TEST(UsageFlusherTest, StopFlushesWhatIsLeft) {
  UsageLedger ledger;
  RecordingSink recorded;
  UsageFlusher flusher(ledger, recorded.sink(), {.interval = std::chrono::hours(1)});
  flusher.start();
  ledger.add(key_of("late"), {.requests = 2});
  flusher.stop();
  ASSERT_EQ(recorded.batches.size(), 1u);
  EXPECT_EQ(requests_in(recorded.batches[0]), 2u);
}

TEST(UsageFlusherTest, AFailedBatchIsKeptMergedAndRetried) {
  UsageLedger ledger;
  RecordingSink recorded;
  recorded.accept = false;
  UsageFlusher flusher(ledger, recorded.sink(), {});
  ledger.add(key_of("a"), {.requests = 1});
  EXPECT_FALSE(flusher.flush());
  EXPECT_EQ(flusher.rows_pending(), 1u);
  ledger.add(key_of("a"), {.requests = 2});  // the same line: merged, not repeated
  ledger.add(key_of("b"), {.requests = 4});
  EXPECT_FALSE(flusher.flush());
  EXPECT_EQ(flusher.rows_pending(), 2u);
  recorded.accept = true;
  EXPECT_TRUE(flusher.flush());
  EXPECT_EQ(flusher.rows_pending(), 0u);
  ASSERT_EQ(recorded.batches.size(), 3u);
  EXPECT_EQ(recorded.batches[2].size(), 2u);
  EXPECT_EQ(requests_in(recorded.batches[2]), 7u);
  EXPECT_EQ(flusher.flushes_failed(), 2u);
  EXPECT_EQ(flusher.flushes_ok(), 1u);
  EXPECT_EQ(flusher.rows_dropped(), 0u);
}

TEST(UsageFlusherTest, PastTheBoundTheOldestHoursAreDroppedAndCounted) {
  UsageLedger ledger;
  RecordingSink recorded;
  recorded.accept = false;
  UsageFlusher flusher(ledger, recorded.sink(), {.max_pending_rows = 2});
  for (int hour = 1; hour <= 4; ++hour) ledger.add(key_of("k", hour * kHour), {.requests = 1});
  EXPECT_FALSE(flusher.flush());
  EXPECT_EQ(flusher.rows_dropped(), 2u);
  EXPECT_EQ(flusher.rows_pending(), 2u);
  recorded.accept = true;
  EXPECT_TRUE(flusher.flush());
  std::vector<int64_t> hours;
  for (const auto& r : recorded.batches.back()) hours.push_back(r.key.hour_ms);
  std::sort(hours.begin(), hours.end());
  EXPECT_EQ(hours, (std::vector<int64_t>{3 * kHour, 4 * kHour}));
}

TEST(UsagePostSinkTest, PostsTheBatchWithTheNodesHeaders) {
  ScriptedControlPlane cp;
  cp.script({{.status = 200, .body = R"({"accepted":1})"}, {.status = 503, .body = "down"}});
  auto sink = make_usage_post_sink({.control_plane = cp.url(),
                                    .node_id = "node-7",
                                    .node_token = "secret",
                                    .node_version = "1.0",
                                    .snapshot_version = [] { return uint64_t{5}; }});
  std::vector<UsageRow> rows = {{key_of("ci"), {.requests = 3, .usd = 0.5}}};
  EXPECT_TRUE(sink(std::vector<UsageRow>(rows)));
  std::vector<UsageRow> again = rows;
  EXPECT_FALSE(sink(std::move(again)));
  EXPECT_EQ(again, rows);  // left as it was, for the flusher to keep
  ASSERT_TRUE(cp.wait_requests(2));
  const std::vector<RecordedRequest> requests = cp.requests();
  const RecordedRequest& first = requests[0];
  EXPECT_EQ(first.method, "POST");
  EXPECT_EQ(first.target, "/internal/v1/usage");
  EXPECT_EQ(first.header("authorization"), "Bearer secret");
  EXPECT_EQ(first.header("x-rolter-node-id"), "node-7");
  EXPECT_EQ(first.header("x-rolter-snapshot-version"), "5");
  auto posted = parse_usage_rows(first.body);
  ASSERT_TRUE(posted) << posted.error();
  EXPECT_EQ(*posted, rows);
}

TEST(UsagePostSinkTest, ARefusedConnectionFailsWithinItsDeadline) {
  auto sink = make_usage_post_sink({.control_plane = refused_control_plane_url(),
                                    .connect_timeout = milliseconds(500),
                                    .deadline = milliseconds(500)});
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(sink({{key_of("ci"), {.requests = 1}}}));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  auto broken = make_usage_post_sink({.control_plane = "not a url"});
  EXPECT_FALSE(broken({{key_of("ci"), {.requests = 1}}}));
}

}  // namespace
}  // namespace rolter
