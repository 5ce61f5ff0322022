// HealthProbe: one instance's active health check (SPEC §8, [health]) as a pure state machine,
// driven by an injected clock: when the next check is due, and what each answer does to the
// instance's verdict. HealthChecker runs one per checked instance on its PollLoop.
//
//   HealthProbe probe(clock, settings_from(config.health));
//   probe.set_instance(&state->health);
//   if (probe.due()) {
//     probe.begin();
//     ...GET <base_url><health_path>...
//     switch (probe.record(ok)) { ... }     // kBecameUnhealthy after unhealthy_threshold failures
//   }
//
// A check is due every `interval` from the start of the last one, and never overlaps the next.
// The verdict's rule (thresholds, and a good check ending a refused-connection parking) is
// fleet/availability's record_health_check(). A retired probe leaves its instance healthy: an
// instance whose check was removed is no longer held out by an old verdict.
//
// Thread-safety: one thread (the checker's loop); it writes InstanceHealth atomics that workers
// read.
#pragma once

#include <chrono>
#include <cstdint>

#include "collect/loop/poll_schedule.h"
#include "common/clock.h"
#include "fleet/availability.h"

namespace rolter {

struct HealthSettings {
  std::chrono::milliseconds interval{5000};
  std::chrono::milliseconds timeout{1000};  // of one check: connect, request and answer
  uint32_t unhealthy_threshold = 3;         // failures in a row that make it unhealthy
  uint32_t healthy_threshold = 2;           // successes in a row that make it healthy again

  bool operator==(const HealthSettings&) const = default;
};

class HealthProbe {
 public:
  enum class Change { kNone, kBecameHealthy, kBecameUnhealthy };

  HealthProbe(const Clock& clock, HealthSettings settings);
  ~HealthProbe() { retire(); }
  HealthProbe(const HealthProbe&) = delete;
  HealthProbe& operator=(const HealthProbe&) = delete;

  // New settings keep the counts so far; the next check is due `interval` after the last began.
  void set_settings(HealthSettings settings);
  const HealthSettings& settings() const { return settings_; }
  // The instance whose verdict the checks write. REQUIRES: it outlives this probe or the next
  // set_instance() (the LoadTracker keeps it for the process's life).
  void set_instance(InstanceHealth* health) { health_ = health; }

  // For the PollLoop: its interval and timeout (a verdict has no staleness).
  const PollTiming& timing() const { return schedule_.timing(); }
  bool due() const { return schedule_.due(); }
  void begin() { schedule_.begin(); }
  bool check_stale() { return false; }

  // The answer to the check begun last: ok = a 2xx within the timeout. Returns the verdict's
  // change, if it changed; ignored (kNone) when no check is in flight (retired meanwhile).
  Change record(bool ok);
  // Leaves the instance healthy and forgets it; later answers change nothing.
  void retire();

  bool healthy() const;
  uint32_t consecutive_ok() const { return consecutive_ok_; }
  uint32_t consecutive_failed() const { return consecutive_failed_; }

 private:
  PollSchedule schedule_;
  HealthSettings settings_;
  InstanceHealth* health_ = nullptr;
  uint32_t consecutive_ok_ = 0;
  uint32_t consecutive_failed_ = 0;
};

}  // namespace rolter
