// RedisLimiter: the Limiter shared by every gateway node (SPEC §15, "Backends"). Each admission
// is one server-side Lua script (admit.lua) over all the request's rules, each settlement another
// (settle.lua), so any number of nodes enforce one limit exactly and a refused request writes
// nothing. Time is Redis's TIME; a budget period's id comes from this node's clock.
//
//   RedisLimiterOptions options;
//   options.connection.host = "10.0.0.5";
//   options.on_backend_error = BackendErrorPolicy::kClosed;
//   RedisLimiter limiter(worker_io.get_executor(), options);
//   Admission a = co_await limiter.admit(rules, demand);
//
// Keys, for a rule with id R (the braces make one rule's keys share a cluster hash slot):
//   <prefix>{R}:gcra                 rpm: the GCRA's TAT in unix microseconds
//   <prefix>{R}:tpm                  tpm: hash unix second -> tokens, the last 60 s
//   <prefix>{R}:inflight             max_in_flight: sorted set request id -> lease expiry (ms)
//   <prefix>{R}:budget:<period id>   budget: the period's spend in USD ("d20240603", "w...",
//   "m...")
//
// When Redis cannot answer within the timeout (down, hung, reconnecting), admit() returns
// backend_error: admitted under kOpen, refused kUnavailable under kClosed; settle() drops the
// settlement. Both count in backend_errors().
//
// Thread-safety: one RedisLimiter per worker io_context, called on that thread only (limiter.h).
// backend_errors() may be read from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "limits/limiter.h"
#include "limits/redis/redis_client.h"

namespace rolter {

enum class BackendErrorPolicy : uint8_t {
  kOpen,    // admit, counting the error (the default: limits never take the gateway down)
  kClosed,  // refuse with 503 limits_unavailable
};

struct RedisLimiterOptions {
  // host, port, unix_path, tls (ca_file, server_name), db, password; command_timeout is the
  // per-admission timeout (20 ms).
  RedisClientOptions connection;
  std::string key_prefix = "rolter:limits:";
  BackendErrorPolicy on_backend_error = BackendErrorPolicy::kOpen;
};

class RedisLimiter final : public Limiter {
 public:
  // `wall_clock_ms` is this node's unix time in ms, for budget periods (injected for tests).
  RedisLimiter(asio::any_io_executor executor, RedisLimiterOptions options,
               Random& random = default_random(), std::function<int64_t()> wall_clock_ms = nullptr);

  Task<Admission> admit(std::span<const LimitRule* const> rules, const Demand& demand) override;
  void settle(std::span<const LimitRule* const> rules, const Demand& demand,
              const Admission& admission, const Settlement& settlement) override;

  // Admissions and settlements that the backend did not answer.
  uint64_t backend_errors() const {
    return counters_->backend_errors.load(std::memory_order_relaxed);
  }
  // Settlements sent and answered.
  uint64_t settlements() const { return counters_->settlements.load(std::memory_order_relaxed); }
  bool connected() const { return client_.connected(); }
  const RedisClient& client() const { return client_; }

 private:
  struct Counters {
    std::atomic<uint64_t> backend_errors{0};
    std::atomic<uint64_t> settlements{0};
  };

  Admission backend_error(int64_t now_ms) const;

  RedisLimiterOptions options_;
  std::function<int64_t()> wall_clock_ms_;
  std::shared_ptr<Counters> counters_ = std::make_shared<Counters>();  // settlements outlive us
  RedisClient client_;
};

}  // namespace rolter
