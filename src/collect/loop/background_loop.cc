#include "collect/loop/background_loop.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

namespace rolter {

BackgroundLoop::BackgroundLoop() : io_(std::make_unique<asio::io_context>(1)) {}

BackgroundLoop::~BackgroundLoop() { stop(); }

void BackgroundLoop::start(std::function<Task<void>()> main) {
  if (thread_.joinable()) return;
  asio::co_spawn(*io_, main(), asio::detached);
  thread_ = std::thread([io = io_.get()] {
    // Held for the thread's life: the loop keeps running once `main` has returned, for work
    // posted to it later.
    auto work = asio::make_work_guard(*io);
    io->run();
  });
}

void BackgroundLoop::stop() {
  if (!thread_.joinable()) return;
  io_->stop();
  thread_.join();
}

}  // namespace rolter
