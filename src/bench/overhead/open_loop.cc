#include "bench/overhead/open_loop.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <deque>
#include <list>
#include <vector>

#include "bench/overhead/exchange.h"
#include "bench/percentile.h"

namespace rolter::bench::overhead {
namespace {

using Clock = std::chrono::steady_clock;

// Lets the first sends start on time rather than late by the setup.
constexpr auto kStartDelay = std::chrono::milliseconds(20);

struct Connection {
  explicit Connection(asio::any_io_executor ex) : stream(ex), wake(ex) {}
  beast::tcp_stream stream;
  beast::flat_buffer buffer;
  asio::steady_timer wake;  // an idle connection waits on it; cancel() wakes it
};

class OpenLoop {
 public:
  OpenLoop(const Target& t, const OpenLoopOptions& o)
      : target_(t),
        options_(o),
        request_(t.raw_request(false)),
        timeout_(seconds(o.timeout_s)),
        deadline_timer_(io_) {}

  ProbeOutcome run() {
    const auto count = static_cast<uint64_t>(options_.rps * options_.duration_s);
    latencies_.reserve(count);
    asio::co_spawn(io_, schedule(count), asio::detached);
    io_.run();
    ProbeOutcome out;
    out.requests = count;
    out.errors = errors_ + (count - std::min<uint64_t>(count, latencies_.size() + errors_));
    out.p99_ms = percentile(latencies_, 99) / 1000.0;
    return out;
  }

 private:
  static Clock::duration seconds(double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  }

  Task<> schedule(uint64_t count) {
    asio::steady_timer timer(io_);
    const auto start = Clock::now() + kStartDelay;
    const double interval_s = 1.0 / options_.rps;
    for (uint64_t i = 0; i < count;) {
      timer.expires_at(start + seconds(interval_s * static_cast<double>(i)));
      [[maybe_unused]] auto [e] = co_await timer.async_wait(kNoThrow);
      // Every send now due, in case the timer woke late.
      const auto now = Clock::now();
      while (i < count && start + seconds(interval_s * static_cast<double>(i)) <= now) {
        pending_.push_back(start + seconds(interval_s * static_cast<double>(i)));
        ++i;
        dispatch();
      }
    }
    stopping_ = true;
    for (Connection* c : idle_) c->wake.cancel();
    idle_.clear();
    if (live_ == 0) co_return;
    // Whatever is still out when the drain ends is cut and counted as unanswered.
    deadline_timer_.expires_after(seconds(options_.drain_s));
    auto [e] = co_await deadline_timer_.async_wait(kNoThrow);
    if (!e) {
      aborted_ = true;
      error_code ignored;
      for (Connection& c : connections_) c.stream.socket().close(ignored);
    }
  }

  void dispatch() {
    if (!idle_.empty()) {
      Connection* c = idle_.back();
      idle_.pop_back();
      c->wake.cancel();
    } else if (connections_.size() < options_.max_connections) {
      connections_.emplace_back(io_.get_executor());
      ++live_;
      asio::co_spawn(io_, serve(connections_.back()), asio::detached);
    }
  }

  Task<> serve(Connection& c) {
    bool connected = false;
    while (!aborted_) {
      if (pending_.empty()) {
        if (stopping_) break;
        idle_.push_back(&c);
        c.wake.expires_at(Clock::time_point::max());
        [[maybe_unused]] auto [e] = co_await c.wake.async_wait(kNoThrow);
        continue;
      }
      if (!connected) {
        c.buffer.clear();
        if (auto ec = co_await connect(c.stream, target_.host, target_.port, timeout_)) {
          // The due request stays queued for another connection; this one gives up.
          ++connect_failures_;
          break;
        }
        connected = true;
        continue;  // the queue may have been emptied meanwhile
      }
      const Clock::time_point due = pending_.front();
      pending_.pop_front();
      ExchangeResult r = co_await exchange(c.stream, c.buffer, request_, timeout_);
      if (r.ok()) {
        latencies_.push_back(std::chrono::duration<double, std::micro>(r.done - due).count());
      } else if (!aborted_) {
        ++errors_;
      }
      if (r.error || !r.keep_alive) {
        error_code ignored;
        c.stream.socket().close(ignored);
        connected = false;
      }
    }
    if (--live_ == 0 && stopping_) deadline_timer_.cancel();
  }

  const Target& target_;
  const OpenLoopOptions options_;
  const std::string request_;
  const Clock::duration timeout_;
  asio::io_context io_;
  asio::steady_timer deadline_timer_;
  std::list<Connection> connections_;  // stable addresses
  std::vector<Connection*> idle_;
  std::deque<Clock::time_point> pending_;
  std::vector<double> latencies_;  // microseconds
  uint64_t errors_ = 0;
  uint64_t connect_failures_ = 0;
  size_t live_ = 0;
  bool stopping_ = false;
  bool aborted_ = false;
};

}  // namespace

ProbeOutcome run_open_loop(const Target& target, const OpenLoopOptions& options) {
  OpenLoop loop(target, options);
  return loop.run();
}

}  // namespace rolter::bench::overhead
