// WorkerTenancy: one worker's side of the limits and usage of keys (SPEC §15).
//
// It gives each request the limiter that admits it: the process's LocalLimiter, or this worker's
// own RedisLimiter (one connection on the worker's event loop), made when a snapshot first names
// `backend = "redis"` and made anew when the [limits] it was made from change. And it names every
// accounted request uniquely, for the in-flight leases.
//
// Thread-safety: used on its worker's thread only. TenancyServices are shared by every worker and
// are safe from any thread.
#pragma once

#include <boost/asio/io_context.hpp>

#include <cstdint>
#include <memory>
#include <string>

#include "proxy/tenancy.h"

namespace rolter {

class LocalLimiter;
class RedisLimiter;
class UsageLedger;

// What every worker shares; set before the server starts. Both may be null.
struct TenancyServices {
  LocalLimiter* local = nullptr;  // the backend of `backend = "local"`; null = limits are off
  UsageLedger* ledger = nullptr;  // null = usage is not recorded; one shard per worker
};

class WorkerTenancy {
 public:
  WorkerTenancy(asio::io_context& io, unsigned worker_index);
  ~WorkerTenancy();

  // Whether a request of `key` (null: open gateway) is accounted: the key has limits, or usage is
  // recorded.
  static bool applies(const TenancyServices* services, const ApiKey* key) {
    if (services == nullptr) return false;
    return services->ledger != nullptr ||
           (services->local != nullptr && key != nullptr && !key->rules.empty());
  }

  // Makes the limiter `limits` names, if it is not made yet: a Redis connection is up before the
  // first request that needs it. Call when a snapshot arrives.
  void prepare(const TenancyServices& services, const LimitsConfig& limits) {
    limiter_for(services, limits);
  }

  // The scope of one request that started at `started_ms` (wall clock, ms since the Unix epoch:
  // its usage hour).
  // REQUIRES: applies(&services, key).
  TenancyScope scope(const TenancyServices& services, const Snapshot& snapshot, const ApiKey* key,
                     Metrics* metrics, int64_t started_ms);

 private:
  Limiter* limiter_for(const TenancyServices& services, const LimitsConfig& limits);

  asio::io_context& io_;
  unsigned worker_index_;  // also this worker's shard of the usage ledger
  std::unique_ptr<RedisLimiter> redis_;
  std::string redis_made_from_;  // the [limits] settings redis_ was made with
  std::string id_prefix_;        // random per worker and process: ids differ across nodes
  uint64_t next_id_ = 0;
};

}  // namespace rolter
