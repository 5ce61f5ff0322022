// wait_for: polls a condition in the background services' thread tests, until it holds or 10 s
// pass. The services tick within milliseconds, so a pass takes a tick or two; the deadline only
// turns a hang into a failure.
//
//   ASSERT_TRUE(wait_for([&] { return server.requests() >= 2; }));
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace rolter {

inline bool wait_for(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

}  // namespace rolter
