// ServerState: what every worker shares: the drain flag and the count of requests in progress.
//
// Thread-safety: all members are atomics; safe from any thread.
#pragma once

#include <atomic>
#include <cstdint>

namespace rolter {

class ControlHandler;
class LoadTracker;
class Metrics;
class SpanQueue;
struct TenancyServices;

class ServerState {
 public:
  // Process-wide state for /metrics; set before the server starts, then read-only.
  Metrics* metrics = nullptr;
  const LoadTracker* tracker = nullptr;
  // The control plane served on the main listener (/api/, /internal/), or null.
  ControlHandler* control = nullptr;
  // The limits and usage records of keys (server/worker_tenancy.h), or null: none.
  const TenancyServices* tenancy = nullptr;
  // Where recorded requests' spans go for export ([tracing], SPEC §17), or null: none are made.
  SpanQueue* spans = nullptr;

  bool draining() const { return draining_.load(std::memory_order_acquire); }
  // True for the call that started the drain, false for any later one.
  bool start_draining() { return !draining_.exchange(true, std::memory_order_acq_rel); }

  bool ready() const { return ready_.load(std::memory_order_acquire); }
  void set_ready(bool ready) { ready_.store(ready, std::memory_order_release); }

  // Open client connections, against server.max_connections (0 = no cap).
  uint64_t connections() const { return connections_.load(std::memory_order_acquire); }
  void connection_opened() { connections_.fetch_add(1, std::memory_order_acq_rel); }
  void connection_closed() { connections_.fetch_sub(1, std::memory_order_acq_rel); }

  // Requests being served (read completely, response not yet finished).
  uint64_t active_requests() const { return active_.load(std::memory_order_acquire); }
  void request_started() { active_.fetch_add(1, std::memory_order_acq_rel); }
  void request_finished() { active_.fetch_sub(1, std::memory_order_acq_rel); }

 private:
  std::atomic<bool> draining_{false};
  std::atomic<bool> ready_{false};
  std::atomic<uint64_t> active_{0};
  std::atomic<uint64_t> connections_{0};
};

}  // namespace rolter
