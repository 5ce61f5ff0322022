#include "config/flow_fields.h"

#include <array>
#include <limits>
#include <string>

namespace rolter::config_internal {
namespace {

constexpr uint32_t kTopBand = 7;
// A reserve of more slots than a large fleet's would only idle them.
constexpr uint32_t kMaxFairReserve = 1024;
// An unset value: read() leaves its output alone when the key is absent or its value bad, so the
// sentinel tells.
constexpr uint32_t kUnread = std::numeric_limits<uint32_t>::max();

// Asks for the key whether or not it is set (the reference's schema walk sees every key).
void read_optional(TableReader& in, std::string_view key, std::optional<uint32_t>& out,
                   int64_t min, int64_t max) {
  uint32_t value = kUnread;
  in.read(key, value, min, max);
  if (value != kUnread) out = value;
}

}  // namespace

void read_priority(TableReader& in, std::string_view key, std::optional<uint32_t>& out) {
  read_optional(in, key, out, 0, kTopBand);
}

void read_provider_flow(TableReader& in, ProviderConfig& out) {
  read_optional(in, "max_in_flight_per_instance", out.max_in_flight_per_instance, 1, kUnread - 1);
  read_optional(in, "max_waiting_per_instance", out.max_waiting_per_instance, 0, kUnread - 1);
}

void read_queue(TableReader& in, QueueConfig& out) {
  in.read("max_requests", out.max_requests);  // 0 = no queue: shed at once when saturated
  in.read("max_wait_ms", out.max_wait_ms, 1);
  in.read("fair_preempt", out.fair_preempt);
  in.read("fair_reserve", out.fair_reserve, 0, kMaxFairReserve);
  in.for_each_table("bands", [&](TableReader& band_in) {
    QueueBandConfig& band = out.bands.emplace_back();
    band_in.require("band");
    band_in.read("band", band.band, 0, kTopBand);
    band_in.read("preempt", band.preempt);
    std::optional<uint32_t> max_ttft_ms;
    read_optional(band_in, "max_ttft_ms", max_ttft_ms, 1, kUnread - 1);
    if (max_ttft_ms) band.max_ttft_ms = *max_ttft_ms;
    band_in.finish();
  });
  in.finish();
}

void check_flow(const Config& config, Diagnostics& diag) {
  std::array<bool, kTopBand + 1> seen{};
  for (size_t i = 0; i < config.queue.bands.size(); ++i) {
    const uint32_t band = config.queue.bands[i].band;
    if (band > kTopBand) continue;  // reported by the reader
    if (seen[band]) {
      diag.error(child_path(index_path("queue.bands", i), "band"),
                 "band " + std::to_string(band) + " is configured twice");
    }
    seen[band] = true;
  }
  for (size_t i = 0; i < config.providers.size(); ++i) {
    const ProviderConfig& p = config.providers[i];
    if (p.max_waiting_per_instance && p.load_source != "engine_metrics") {
      diag.error(child_path(index_path("providers", i), "max_waiting_per_instance"),
                 "needs load_source = \"engine_metrics\": the waiting count is the engine's");
    }
  }
}

}  // namespace rolter::config_internal
