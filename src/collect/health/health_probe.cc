#include "collect/health/health_probe.h"

namespace rolter {
namespace {

PollTiming timing_of(const HealthSettings& settings) {
  return PollTiming{.interval = settings.interval, .timeout = settings.timeout};
}

}  // namespace

HealthProbe::HealthProbe(const Clock& clock, HealthSettings settings)
    : schedule_(clock, timing_of(settings)), settings_(settings) {}

void HealthProbe::set_settings(HealthSettings settings) {
  settings_ = settings;
  schedule_.set_timing(timing_of(settings));
}

HealthProbe::Change HealthProbe::record(bool ok) {
  if (!schedule_.in_flight() || health_ == nullptr) return Change::kNone;
  ok ? schedule_.succeed() : schedule_.fail();
  const bool before = health_->healthy.load();
  record_health_check(*health_, ok, consecutive_ok_, consecutive_failed_,
                      settings_.healthy_threshold, settings_.unhealthy_threshold);
  const bool after = health_->healthy.load();
  if (before == after) return Change::kNone;
  return after ? Change::kBecameHealthy : Change::kBecameUnhealthy;
}

void HealthProbe::retire() {
  if (health_ != nullptr) health_->healthy.store(true);
  health_ = nullptr;
  schedule_.retire();
  consecutive_ok_ = 0;
  consecutive_failed_ = 0;
}

bool HealthProbe::healthy() const { return health_ == nullptr || health_->healthy.load(); }

}  // namespace rolter
