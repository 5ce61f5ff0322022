// Reads that track readiness (net/reactor_read.h), through TimedStream as the proxy uses them: a
// short read marks the socket drained and the next read waits for the event; the input watch
// reports input and is taken over by the next read.
#include "net/reactor_read.h"

#include <sys/socket.h>

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "net/testing/connected_pair.h"
#include "net/timed_stream.h"

namespace rolter {
namespace {

using namespace std::chrono_literals;
using asio::ip::tcp;
using Input = reactor_read::InputSink::Input;

struct ReadResult {
  error_code ec;
  std::string bytes;
};

// Starts a read of up to `size` bytes; its result lands in `out` when it completes.
void start_read(asio::io_context& io, TimedStream& stream, size_t size,
                std::optional<ReadResult>& out) {
  asio::co_spawn(
      io,
      [&stream, size, &out]() -> Task<void> {
        std::string data(size, '\0');
        auto [ec, n] = co_await stream.async_read_some(asio::buffer(data), kNoThrow);
        data.resize(n);
        out = ReadResult{ec, std::move(data)};
      },
      asio::detached);
}

// Runs `io` until `done` holds, for at most 10 s.
template <typename Done>
bool run_until(asio::io_context& io, Done done) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    io.restart();
    io.run_for(5ms);
  }
  return done();
}

// Lets the loop wait for events for 20 ms (a timer gives it work: a loop without any returns
// before it polls).
void poll_events(asio::io_context& io) {
  asio::steady_timer timer(io, 20ms);
  bool fired = false;
  timer.async_wait([&](error_code) { fired = true; });
  while (!fired) {
    io.restart();
    io.run_one();
  }
}

struct RecordingSink final : reactor_read::InputSink {
  void on_input(Input input, const error_code& ec) override { heard.push_back({input, ec}); }
  std::vector<std::pair<Input, error_code>> heard;
};

TEST(ReactorReadTest, AShortReadLeavesTheSocketKnownDrainedUntilAnEvent) {
  asio::io_context io;
  auto [stream, peer] = connected_pair(io);
  asio::write(peer, asio::buffer("abc", 3));
  // The loop sees the bytes' event first (a read that took them before it did would be followed
  // by that event, and the socket would rightly count as worth trying again).
  poll_events(io);
  EXPECT_TRUE(stream.may_have_input());
  std::optional<ReadResult> first;
  start_read(io, stream, 16, first);
  ASSERT_TRUE(run_until(io, [&] { return first.has_value(); }));
  EXPECT_EQ(first->bytes, "abc");
  EXPECT_FALSE(stream.may_have_input()) << "3 bytes into 16: the socket was drained";

  poll_events(io);  // nothing came: still drained
  EXPECT_FALSE(stream.may_have_input());

  asio::write(peer, asio::buffer("de", 2));
  poll_events(io);  // the readable event, with no read queued
  EXPECT_TRUE(stream.may_have_input());
  std::optional<ReadResult> second;
  start_read(io, stream, 16, second);
  ASSERT_TRUE(run_until(io, [&] { return second.has_value(); }));
  EXPECT_EQ(second->bytes, "de");
}

TEST(ReactorReadTest, AReadThatFillsItsBufferLeavesTheSocketWorthTrying) {
  asio::io_context io;
  auto [stream, peer] = connected_pair(io);
  asio::write(peer, asio::buffer("abcdef", 6));
  std::optional<ReadResult> first;
  start_read(io, stream, 4, first);
  ASSERT_TRUE(run_until(io, [&] { return first.has_value(); }));
  EXPECT_EQ(first->bytes, "abcd");
  EXPECT_TRUE(stream.may_have_input());
  std::optional<ReadResult> rest;
  start_read(io, stream, 4, rest);  // tried at once: the two bytes left are there
  ASSERT_TRUE(run_until(io, [&] { return rest.has_value(); }));
  EXPECT_EQ(rest->bytes, "ef");
}

// The edge that follows a drained read is never lost: data sent after the read found nothing
// wakes it, whether it comes before or after the read is queued.
TEST(ReactorReadTest, AReadOnADrainedSocketWakesWhenDataComes) {
  asio::io_context io;
  auto [stream, peer] = connected_pair(io);
  for (int round = 0; round < 50; ++round) {
    const std::string message = "message " + std::to_string(round);
    std::optional<ReadResult> result;
    if (round % 2 == 0) {
      start_read(io, stream, 64, result);
      poll_events(io);
      EXPECT_FALSE(result.has_value());
      asio::write(peer, asio::buffer(message));
    } else {
      asio::write(peer, asio::buffer(message));
      start_read(io, stream, 64, result);
    }
    ASSERT_TRUE(run_until(io, [&] { return result.has_value(); })) << "round " << round;
    EXPECT_FALSE(result->ec) << result->ec.message();
    EXPECT_EQ(result->bytes, message);
    EXPECT_FALSE(stream.may_have_input());
  }
}

TEST(ReactorReadTest, TheEndOfThePeersStreamIsEof) {
  asio::io_context io;
  auto [stream, peer] = connected_pair(io);
  peer.shutdown(tcp::socket::shutdown_send);
  std::optional<ReadResult> result;
  start_read(io, stream, 16, result);
  ASSERT_TRUE(run_until(io, [&] { return result.has_value(); }));
  EXPECT_EQ(result->ec, asio::error::eof);
}

// The peer's last bytes and its close come in one wake-up (edge-triggered: no second event will
// come for the close). The read of those bytes is short, yet the socket is not drained: the next
// read finds the end of stream instead of waiting for an event.
TEST(ReactorReadTest, AnEndOfStreamThatCameWithTheLastBytesIsStillRead) {
  for (const bool taken_over : {false, true}) {
    asio::io_context io;
    auto [stream, peer] = connected_pair(io);
    asio::write(peer, asio::buffer("x", 1));
    poll_events(io);
    std::optional<ReadResult> drain;
    start_read(io, stream, 16, drain);
    ASSERT_TRUE(run_until(io, [&] { return drain.has_value(); }));
    ASSERT_FALSE(stream.may_have_input());

    if (taken_over) stream.watch_input(nullptr);
    std::optional<ReadResult> last;
    start_read(io, stream, 16, last);  // queued: the socket is drained
    asio::write(peer, asio::buffer("tail", 4));
    peer.shutdown(tcp::socket::shutdown_send);
    ASSERT_TRUE(run_until(io, [&] { return last.has_value(); }));
    EXPECT_FALSE(last->ec) << last->ec.message();
    EXPECT_EQ(last->bytes, "tail");

    std::optional<ReadResult> end;
    start_read(io, stream, 16, end);
    ASSERT_TRUE(run_until(io, [&] { return end.has_value(); }))
        << "the end of stream was never read (taken over: " << taken_over << ")";
    EXPECT_EQ(end->ec, asio::error::eof);
  }
}

TEST(ReactorReadTest, TheWatchHearsBytesAndLeavesThemForTheNextRead) {
  asio::io_context io;
  auto [stream, peer] = connected_pair(io);
  RecordingSink sink;
  stream.watch_input(&sink);
  poll_events(io);
  EXPECT_TRUE(sink.heard.empty());
  asio::write(peer, asio::buffer("GET", 3));
  ASSERT_TRUE(run_until(io, [&] { return !sink.heard.empty(); }));
  ASSERT_EQ(sink.heard.size(), 1u);
  EXPECT_EQ(sink.heard[0].first, Input::kBytes);
  std::optional<ReadResult> read;
  start_read(io, stream, 16, read);
  ASSERT_TRUE(run_until(io, [&] { return read.has_value(); }));
  EXPECT_EQ(read->bytes, "GET");
}

TEST(ReactorReadTest, TheWatchHearsAHalfCloseAndAReset) {
  {
    asio::io_context io;
    auto [stream, peer] = connected_pair(io);
    RecordingSink sink;
    stream.watch_input(&sink);
    peer.shutdown(tcp::socket::shutdown_send);
    ASSERT_TRUE(run_until(io, [&] { return !sink.heard.empty(); }));
    EXPECT_EQ(sink.heard[0].first, Input::kEnd);
  }
  {
    asio::io_context io;
    auto [stream, peer] = connected_pair(io);
    RecordingSink sink;
    stream.watch_input(&sink);
    peer.set_option(asio::socket_base::linger(true, 0));  // close sends a reset
    peer.close();
    ASSERT_TRUE(run_until(io, [&] { return !sink.heard.empty(); }));
    EXPECT_EQ(sink.heard[0].first, Input::kError);
    EXPECT_EQ(sink.heard[0].second, asio::error::connection_reset) << sink.heard[0].second.message();
  }
}

// Between requests: the watch's sink is forgotten, the next read takes the queued look over, and
// gets the bytes; the sink hears nothing.
TEST(ReactorReadTest, AReadTakesTheWatchOver) {
  asio::io_context io;
  auto [stream, peer] = connected_pair(io);
  RecordingSink sink;
  stream.watch_input(&sink);
  stream.forget_input_sink();
  std::optional<ReadResult> read;
  start_read(io, stream, 16, read);
  poll_events(io);
  EXPECT_FALSE(read.has_value());
  asio::write(peer, asio::buffer("next", 4));
  ASSERT_TRUE(run_until(io, [&] { return read.has_value(); }));
  EXPECT_FALSE(read->ec) << read->ec.message();
  EXPECT_EQ(read->bytes, "next");
  EXPECT_TRUE(sink.heard.empty());
  EXPECT_FALSE(stream.may_have_input()) << "the read taken over drained the socket too";

  // And a watch again, for the next request: it hears what comes.
  stream.watch_input(&sink);
  peer.shutdown(tcp::socket::shutdown_send);
  ASSERT_TRUE(run_until(io, [&] { return !sink.heard.empty(); }));
  EXPECT_EQ(sink.heard[0].first, Input::kEnd);
}

TEST(ReactorReadTest, AReadTakenOverEndsAtTheDeadline) {
  asio::io_context io;
  auto [stream, peer] = connected_pair(io);
  stream.watch_input(nullptr);
  stream.expires_after(50ms);
  std::optional<ReadResult> read;
  start_read(io, stream, 16, read);
  ASSERT_TRUE(run_until(io, [&] { return read.has_value(); }));
  EXPECT_EQ(read->ec, beast::error::timeout) << read->ec.message();
  EXPECT_FALSE(stream.socket().is_open());
}

TEST(ReactorReadTest, CancelEndsAReadTakenOverAndTheNextReadStillWorks) {
  asio::io_context io;
  auto [stream, peer] = connected_pair(io);
  stream.watch_input(nullptr);
  std::optional<ReadResult> read;
  start_read(io, stream, 16, read);
  poll_events(io);
  stream.cancel();
  ASSERT_TRUE(run_until(io, [&] { return read.has_value(); }));
  EXPECT_EQ(read->ec, asio::error::operation_aborted) << read->ec.message();

  asio::write(peer, asio::buffer("after", 5));
  std::optional<ReadResult> again;
  start_read(io, stream, 16, again);
  ASSERT_TRUE(run_until(io, [&] { return again.has_value(); }));
  EXPECT_FALSE(again->ec) << again->ec.message();
  EXPECT_EQ(again->bytes, "after");
}

// A watch whose stream is gone ends when its socket closes, and reports to no one.
TEST(ReactorReadTest, AWatchOutlivesItsStreamSafely) {
  asio::io_context io;
  RecordingSink sink;
  {
    auto [stream, peer] = connected_pair(io);
    stream.watch_input(&sink);
  }
  poll_events(io);
  EXPECT_TRUE(sink.heard.empty());
}

}  // namespace
}  // namespace rolter
