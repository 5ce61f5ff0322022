#include "collect/loop/background_loop.h"

#include <gtest/gtest.h>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

namespace rolter {
namespace {

using namespace std::chrono_literals;

// Coroutines of their own, not coroutine lambdas: start() keeps its function only until it has
// called it, and a coroutine lambda's captures live in the lambda, not in the coroutine's frame.
Task<void> report_thread(std::promise<std::thread::id>* ran) {
  ran->set_value(std::this_thread::get_id());
  co_return;
}

Task<void> wait_an_hour(std::promise<void>* waiting, std::atomic<bool>* resumed) {
  asio::steady_timer timer(co_await asio::this_coro::executor, std::chrono::hours(1));
  waiting->set_value();
  co_await timer.async_wait(kNoThrow);
  *resumed = true;
}

Task<void> count(std::atomic<int>* runs) {
  ++*runs;
  co_return;
}

TEST(BackgroundLoop, RunsMainOnItsOwnThreadAndKeepsRunningForPostedWork) {
  BackgroundLoop loop;
  std::promise<std::thread::id> ran;
  loop.start([&ran] { return report_thread(&ran); });
  EXPECT_TRUE(loop.running());
  auto id = ran.get_future();
  ASSERT_EQ(id.wait_for(10s), std::future_status::ready);
  EXPECT_NE(id.get(), std::this_thread::get_id());
  // main has returned; the loop still runs what is posted to it.
  std::promise<void> posted;
  asio::post(loop.io(), [&] { posted.set_value(); });
  EXPECT_EQ(posted.get_future().wait_for(10s), std::future_status::ready);
  loop.stop();
  EXPECT_FALSE(loop.running());
  loop.stop();  // idempotent
}

TEST(BackgroundLoop, StopEndsAMainThatWaitsForever) {
  std::atomic<bool> resumed{false};
  std::promise<void> waiting;
  {
    BackgroundLoop loop;
    loop.start([&] { return wait_an_hour(&waiting, &resumed); });
    ASSERT_EQ(waiting.get_future().wait_for(10s), std::future_status::ready);
    loop.stop();
  }  // the pending coroutine is destroyed with the loop, never resumed
  EXPECT_FALSE(resumed);
}

TEST(BackgroundLoop, StartTwiceRunsMainOnce) {
  BackgroundLoop loop;
  std::atomic<int> runs{0};
  auto main = [&runs] { return count(&runs); };
  loop.start(main);
  loop.start(main);
  std::promise<void> drained;
  asio::post(loop.io(), [&] { drained.set_value(); });
  ASSERT_EQ(drained.get_future().wait_for(10s), std::future_status::ready);
  loop.stop();
  EXPECT_EQ(runs, 1);
}

}  // namespace
}  // namespace rolter
