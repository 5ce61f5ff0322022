// One simulated engine (sim/engine_server.h) served by an io_context on its own thread, for the
// request path's tests of calls a worker makes to an engine (/tokenize, a prefill step). The test
// runs its coroutine on that same io_context and waits for it with a deadline. Header-only; tests
// only.
//
//   SimEngine engine(options);                      // sim::EngineOptions: faults, role, ...
//   auto got = engine.run<Result>([&]() -> Task<Result> { co_return co_await call(...); });
//   EXPECT_EQ(engine.stats()["requests"], 1);
#pragma once

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "net/asio_fwd.h"
#include "sim/engine_server.h"

namespace rolter {

class SimEngine {
 public:
  // Every run() has this deadline: a hung call fails the test instead of hanging it.
  static constexpr auto kDeadline = std::chrono::seconds(10);

  explicit SimEngine(sim::EngineOptions options = {}) {
    server_ = std::make_unique<sim::EngineServer>(io_, std::move(options), "127.0.0.1", 0);
    server_->start();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~SimEngine() {
    io_.stop();
    thread_.join();
  }
  SimEngine(const SimEngine&) = delete;
  SimEngine& operator=(const SimEngine&) = delete;

  asio::io_context& io() { return io_; }
  uint16_t port() const { return server_->port(); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port()); }

  // Runs `fn` (a coroutine function) on the engine's io_context and waits for its result.
  template <typename T, typename Fn>
  T run(Fn fn) {
    std::future<T> done = asio::co_spawn(io_, std::move(fn), asio::use_future);
    if (done.wait_for(kDeadline) != std::future_status::ready) {
      ADD_FAILURE() << "no result within the deadline";
      std::abort();  // the coroutine still references this frame's state
    }
    return done.get();
  }

  // The engine's /sim/stats object.
  nlohmann::json stats() {
    return run<nlohmann::json>(
        [this]() -> Task<nlohmann::json> { co_return co_await server_->stats(); });
  }

 private:
  asio::io_context io_{1};
  std::unique_ptr<sim::EngineServer> server_;
  std::thread thread_;
};

}  // namespace rolter
