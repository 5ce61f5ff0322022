// Tenants for `rolter-bench replay --tenants N`: who sends each request of a trace, with which
// key and which priority band, and the rolter.toml text that declares them and flow control.
//
// The rule, fixed so that runs compare:
//   - Shares are Zipf-like: tenant i sends a share proportional to 1 / (i + 1) (3 tenants:
//     54.5%, 27.3%, 18.2%).
//   - Tenant 0, the heaviest, is batch traffic: band 1. Every other tenant is interactive: band 6.
//   - Each request's tenant is drawn independently from the shares with a generator seeded by
//     --seed, so a seed gives the same assignment on every machine.
//
//   auto tenants = make_tenants(3, /*seed=*/1);
//   auto who = assign_tenants(trace.size(), tenant_shares(tenants), /*seed=*/1);
//   toml << tenant_keys_toml(tenants);  // [[keys]] with key_env and priority
//
// Thread-safety: pure functions over values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace rolter::bench {

// The bands of the two kinds of tenant (SPEC §19: 0 lowest .. 7).
inline constexpr uint32_t kBatchBand = 1;
inline constexpr uint32_t kInteractiveBand = 6;

struct Tenant {
  std::string name;     // "tenant-0", the [[keys]] name
  std::string key_env;  // the environment variable rolter reads the key from
  std::string secret;   // the key itself: the bearer token the tenant's requests carry
  uint32_t priority = kInteractiveBand;
  double share = 0;  // of the trace's requests, 0..1
};

// Flow control for the spawned gateway: each provider's bound and the [queue] table.
struct FlowControlSettings {
  size_t max_in_flight_per_instance = 0;
  size_t queue_max_requests = 1024;
  size_t queue_max_wait_ms = 30000;
};

// `n` Zipf-like shares 1 / (i + 1), normalised to sum to 1. REQUIRES: n >= 1.
std::vector<double> zipf_shares(size_t n);

// The band of tenant `index`: batch for tenant 0, interactive for the others.
uint32_t tenant_band(size_t index);

// `n` tenants with their names, key variables, bands and shares; the secrets are derived from
// `seed` (they guard a loopback gateway for one run, nothing more). REQUIRES: n >= 1.
std::vector<Tenant> make_tenants(size_t n, uint64_t seed);

// The tenants' shares, in order.
std::vector<double> tenant_shares(std::span<const Tenant> tenants);

// The tenant of each of `requests` requests, drawn from `shares` with a 64-bit Mersenne Twister
// seeded with `seed`; the same for a seed on every platform. REQUIRES: shares non-empty.
std::vector<uint32_t> assign_tenants(size_t requests, std::span<const double> shares,
                                     uint64_t seed);

// One [[keys]] table per tenant: name, key_env and priority.
std::string tenant_keys_toml(std::span<const Tenant> tenants);

// The [queue] table of `flow`.
std::string queue_toml(const FlowControlSettings& flow);

}  // namespace rolter::bench
