#include "app/service_notify.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "app/testing/notify_socket.h"

namespace rolter {
namespace {

using std::chrono::milliseconds;
using testing::NotifySocket;

class ServiceNotifyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir_template[] = "/tmp/rolter-notify-XXXXXX";
    ASSERT_NE(::mkdtemp(dir_template), nullptr);
    dir_ = dir_template;
    auto bound = NotifySocket::bind(dir_ + "/notify");
    ASSERT_TRUE(bound) << bound.error();
    socket_.emplace(std::move(*bound));
    ::setenv("NOTIFY_SOCKET", socket_->path().c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("NOTIFY_SOCKET");
    ::unsetenv("WATCHDOG_USEC");
    socket_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::string next() { return socket_->receive(milliseconds(2000)).value_or("(nothing)"); }

  std::string dir_;
  std::optional<NotifySocket> socket_;
};

TEST_F(ServiceNotifyTest, SendsEachStateChange) {
  notify_ready();
  EXPECT_EQ(next(), "READY=1");
  notify_ready("serving 3 routes");
  EXPECT_EQ(next(), "READY=1\nSTATUS=serving 3 routes");
  notify_stopping();
  EXPECT_EQ(next(), "STOPPING=1");
  notify_status("draining");
  EXPECT_EQ(next(), "STATUS=draining");
}

TEST_F(ServiceNotifyTest, ReloadingCarriesTheMonotonicClock) {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  const uint64_t before = static_cast<uint64_t>(now.tv_sec) * 1000000u + now.tv_nsec / 1000u;
  notify_reloading();
  const std::string message = next();
  const std::string prefix = "RELOADING=1\nMONOTONIC_USEC=";
  ASSERT_EQ(message.substr(0, prefix.size()), prefix) << message;
  const uint64_t sent = std::stoull(message.substr(prefix.size()));
  EXPECT_GE(sent, before);
  EXPECT_LT(sent - before, 10'000'000u) << "within 10 s of the call";
}

TEST_F(ServiceNotifyTest, AStatusStopsAtItsFirstNewline) {
  notify_status("one\nREADY=1");
  EXPECT_EQ(next(), "STATUS=one");
}

TEST_F(ServiceNotifyTest, WatchdogOnlyWhenTheUnitAskedForOne) {
  notify_watchdog();
  EXPECT_EQ(socket_->receive(milliseconds(200)), std::nullopt);
  ::setenv("WATCHDOG_USEC", "5000000", 1);
  notify_watchdog();
  EXPECT_EQ(next(), "WATCHDOG=1");
}

TEST_F(ServiceNotifyTest, NothingIsSentWithoutNotifySocket) {
  ::unsetenv("NOTIFY_SOCKET");
  notify_ready("x");
  notify_reloading();
  notify_stopping();
  EXPECT_EQ(socket_->receive(milliseconds(200)), std::nullopt);
}

}  // namespace
}  // namespace rolter
