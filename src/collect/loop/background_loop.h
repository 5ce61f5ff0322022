// BackgroundLoop: a background service's own event loop and the thread that runs it, so that its
// polls and posts never compete with requests for a worker.
//
//   struct Service::Impl {
//     ...what run() uses...
//     BackgroundLoop loop;  // last: its coroutines are dropped before what they use
//     Task<void> run();     // timers and one_shot() on loop.io()
//   };
//   impl->loop.start([impl] { return impl->run(); });
//   impl->loop.stop();      // the loop stops at its next turn; the thread is joined
//
// A coroutine still pending at stop() is destroyed with the loop, never resumed.
//
// Thread-safety: start() and stop() from one thread (the owner's). io() may be used from the
// loop's thread, and by asio::post from any thread.
#pragma once

#include <functional>
#include <memory>
#include <thread>

#include "net/asio_fwd.h"

namespace rolter {

class BackgroundLoop {
 public:
  BackgroundLoop();
  ~BackgroundLoop();
  BackgroundLoop(const BackgroundLoop&) = delete;
  BackgroundLoop& operator=(const BackgroundLoop&) = delete;

  asio::io_context& io() { return *io_; }

  // Spawns `main()` on the loop and starts the thread that runs it and whatever it spawns. The
  // thread runs until stop(), even once `main` has returned. `main` is dropped once called, so it
  // returns a coroutine that does not use its captures (`[impl] { return impl->run(); }`), never
  // a coroutine lambda with captures.
  void start(std::function<Task<void>()> main);
  // Stops the loop and joins its thread. Idempotent; a stopped loop cannot start again.
  void stop();
  bool running() const { return thread_.joinable(); }

 private:
  std::unique_ptr<asio::io_context> io_;
  std::thread thread_;
};

}  // namespace rolter
