#include "net/timed_stream.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/write.hpp>

#include <array>
#include <chrono>
#include <optional>
#include <utility>

#include "net/testing/connected_pair.h"

namespace rolter {
namespace {

using namespace std::chrono_literals;
using Clock = TimedStream::Clock;
using asio::ip::tcp;

struct ReadResult {
  error_code ec;
  size_t bytes = 0;
  Clock::duration took{};
};

// Reads once from `stream` and runs `io` until the read ends (at most 10 s); `took` counts from
// `start`.
ReadResult read_once(asio::io_context& io, TimedStream& stream,
                     Clock::time_point start = Clock::now()) {
  std::optional<ReadResult> result;
  std::array<char, 16> data;
  asio::co_spawn(
      io,
      [&]() -> Task<void> {
        auto [ec, n] = co_await stream.async_read_some(asio::buffer(data), kNoThrow);
        result = ReadResult{ec, n, Clock::now() - start};
        io.stop();  // the loop's deadline timer may still be armed
      },
      asio::detached);
  io.restart();
  io.run_for(10s);
  EXPECT_TRUE(result.has_value()) << "the read did not end within 10 s";
  return result.value_or(ReadResult{asio::error::timed_out, 0, {}});
}

TEST(TimedStreamTest, AReadPendingAtTheDeadlineEndsWithTimeoutAndClosesTheSocket) {
  asio::io_context io;
  auto [stream, peer] = connected_pair(io);
  const auto start = Clock::now();
  stream.expires_after(50ms);
  const ReadResult r = read_once(io, stream, start);
  EXPECT_EQ(r.ec, beast::error::timeout) << r.ec.message();
  EXPECT_GE(r.took, 50ms);
  EXPECT_FALSE(stream.socket().is_open());
}

TEST(TimedStreamTest, AReadThatCompletesInTimeIsNotTouched) {
  asio::io_context io;
  auto [stream, peer] = connected_pair(io);
  stream.expires_after(10s);
  asio::write(peer, asio::buffer("hello", 5));
  const ReadResult r = read_once(io, stream);
  EXPECT_FALSE(r.ec) << r.ec.message();
  EXPECT_EQ(r.bytes, 5u);
  EXPECT_TRUE(stream.socket().is_open());
}

// As with Beast's streams: after the deadline, an operation that has to wait ends with a timeout
// at the loop's next turn; one that completes in the call that starts it (a late error answer
// that fits the socket's buffer) still goes through.
TEST(TimedStreamTest, AfterTheDeadlineAWaitingOperationTimesOut) {
  asio::io_context io;
  auto [stream, peer] = connected_pair(io);
  stream.expires_after(1ms);
  io.run_for(50ms);  // the deadline passes with nothing pending: it leaves the heap
  EXPECT_EQ(Deadlines::of(io.get_executor()).size(), 0u);
  EXPECT_TRUE(stream.socket().is_open());
  const ReadResult r = read_once(io, stream);  // nothing to read: it would wait
  EXPECT_EQ(r.ec, beast::error::timeout) << r.ec.message();
  EXPECT_LT(r.took, 5s);
  EXPECT_FALSE(stream.socket().is_open());
}

TEST(TimedStreamTest, AfterTheDeadlineAnOperationThatCompletesAtOnceGoesThrough) {
  asio::io_context io;
  auto [stream, peer] = connected_pair(io);
  stream.expires_after(1ms);
  io.run_for(50ms);
  asio::write(peer, asio::buffer("late", 4));
  const ReadResult r = read_once(io, stream);
  EXPECT_FALSE(r.ec) << r.ec.message();
  EXPECT_EQ(r.bytes, 4u);
}

TEST(TimedStreamTest, ExpiresNeverLiftsTheDeadline) {
  asio::io_context io;
  auto [stream, peer] = connected_pair(io);
  stream.expires_after(30ms);
  stream.expires_never();
  std::optional<ReadResult> result;
  std::array<char, 8> data;
  asio::co_spawn(
      io,
      [&]() -> Task<void> {
        auto [ec, n] = co_await stream.async_read_some(asio::buffer(data), kNoThrow);
        result = ReadResult{ec, n, {}};
      },
      asio::detached);
  io.run_for(200ms);  // well past the lifted deadline: the read still waits
  EXPECT_FALSE(result.has_value());
  asio::write(peer, asio::buffer("x", 1));
  io.restart();
  io.run_for(10s);
  ASSERT_TRUE(result.has_value());
  EXPECT_FALSE(result->ec) << result->ec.message();
}

TEST(TimedStreamTest, EachStreamExpiresAtItsOwnDeadline) {
  asio::io_context io;
  auto [late, late_peer] = connected_pair(io);
  auto [soon, soon_peer] = connected_pair(io);
  // Read before the deadlines are set, so neither can pass before `start` + its timeout.
  const auto start = Clock::now();
  late.expires_after(400ms);  // armed first, then a nearer deadline must re-arm the timer
  soon.expires_after(40ms);
  std::optional<Clock::duration> soon_took, late_took;
  std::array<char, 8> a, b;
  asio::co_spawn(
      io,
      [&]() -> Task<void> {
        auto [ec, n] = co_await soon.async_read_some(asio::buffer(a), kNoThrow);
        EXPECT_EQ(ec, beast::error::timeout);
        soon_took = Clock::now() - start;
      },
      asio::detached);
  asio::co_spawn(
      io,
      [&]() -> Task<void> {
        auto [ec, n] = co_await late.async_read_some(asio::buffer(b), kNoThrow);
        EXPECT_EQ(ec, beast::error::timeout);
        late_took = Clock::now() - start;
      },
      asio::detached);
  io.run_for(10s);
  ASSERT_TRUE(soon_took && late_took);
  EXPECT_GE(*soon_took, 40ms);
  EXPECT_LT(*soon_took, 400ms) << "the nearer deadline waited for the later one";
  EXPECT_GE(*late_took, 400ms);
}

TEST(TimedStreamTest, AMovedStreamKeepsItsDeadline) {
  asio::io_context io;
  auto [stream, peer] = connected_pair(io);
  stream.expires_after(50ms);
  TimedStream moved(std::move(stream));
  EXPECT_EQ(Deadlines::of(io.get_executor()).size(), 1u);
  const ReadResult r = read_once(io, moved);
  EXPECT_EQ(r.ec, beast::error::timeout);
}

TEST(DeadlinesTest, ALaterDeadlineLeavesTheTimerAsArmed) {
  asio::io_context io;
  Deadlines& deadlines = Deadlines::of(io.get_executor());
  auto fired = [](void* owner) { ++*static_cast<int*>(owner); };
  int count_a = 0, count_b = 0;
  Deadlines::Entry a{.expire = fired, .owner = &count_a};
  Deadlines::Entry b{.expire = fired, .owner = &count_b};
  const auto now = Clock::now();
  deadlines.set(a, now + 10s);
  EXPECT_EQ(deadlines.armed_at(), now + 10s);
  // Pushed later, as an idle timeout is on every request: no re-arming.
  deadlines.set(a, now + 20s);
  deadlines.set(b, now + 30s);
  EXPECT_EQ(deadlines.armed_at(), now + 10s);
  // Nearer than the armed time: re-armed.
  deadlines.set(b, now + 5s);
  EXPECT_EQ(deadlines.armed_at(), now + 5s);
  deadlines.remove(b);
  deadlines.remove(a);
  EXPECT_EQ(deadlines.size(), 0u);
  EXPECT_EQ(count_a + count_b, 0);
}

TEST(DeadlinesTest, DueEntriesExpireInOrderAndOnlyOnce) {
  asio::io_context io;
  Deadlines& deadlines = Deadlines::of(io.get_executor());
  struct Owner {
    std::vector<int>* order;
    int id;
  };
  std::vector<int> order;
  std::array<Owner, 6> owners;
  std::array<Deadlines::Entry, 6> entries;
  const auto now = Clock::now();
  const int offsets_ms[] = {50, 10, 40, 20, 1000, 30};
  for (int i = 0; i < 6; ++i) {
    owners[i] = Owner{&order, i};
    entries[i].expire = [](void* o) {
      auto* owner = static_cast<Owner*>(o);
      owner->order->push_back(owner->id);
    };
    entries[i].owner = &owners[i];
    deadlines.set(entries[i], now + std::chrono::milliseconds(offsets_ms[i]));
  }
  deadlines.remove(entries[2]);  // 40 ms: never expires
  io.run_for(300ms);
  EXPECT_EQ(order, (std::vector<int>{1, 3, 5, 0}));
  EXPECT_EQ(deadlines.size(), 1u);  // the 1000 ms one
  deadlines.remove(entries[4]);
}

// A loop run to the end of its work (a one-off exchange on a loop of its own) must end once no
// deadline is left, not when the last one would have passed.
TEST(DeadlinesTest, ALoopWithNoDeadlineLeftRunsOutOfWork) {
  asio::io_context io;
  {
    auto [lifted, lifted_peer] = connected_pair(io);
    lifted.expires_after(30s);
    lifted.expires_never();
    auto [destroyed, destroyed_peer] = connected_pair(io);
    destroyed.expires_after(60s);
  }
  EXPECT_EQ(Deadlines::of(io.get_executor()).size(), 0u);
  io.run_for(5s);
  EXPECT_TRUE(io.stopped()) << "the loop kept waiting for a deadline nobody holds";
}

}  // namespace
}  // namespace rolter
