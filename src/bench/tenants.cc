#include "bench/tenants.h"

#include <cstdio>
#include <random>
#include <sstream>

namespace rolter::bench {

std::vector<double> zipf_shares(size_t n) {
  std::vector<double> shares(n);
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += shares[i] = 1.0 / static_cast<double>(i + 1);
  for (double& s : shares) s /= sum;
  return shares;
}

uint32_t tenant_band(size_t index) { return index == 0 ? kBatchBand : kInteractiveBand; }

std::vector<Tenant> make_tenants(size_t n, uint64_t seed) {
  const std::vector<double> shares = zipf_shares(n);
  std::mt19937_64 rng(seed ^ 0x7e4a47d5u);  // not the assignment's stream
  std::vector<Tenant> tenants;
  for (size_t i = 0; i < n; ++i) {
    char secret[48];
    std::snprintf(secret, sizeof secret, "rb-%zu-%016llx", i,
                  static_cast<unsigned long long>(rng()));
    tenants.push_back({.name = "tenant-" + std::to_string(i),
                       .key_env = "ROLTER_BENCH_TENANT_" + std::to_string(i) + "_KEY",
                       .secret = secret,
                       .priority = tenant_band(i),
                       .share = shares[i]});
  }
  return tenants;
}

std::vector<double> tenant_shares(std::span<const Tenant> tenants) {
  std::vector<double> shares;
  for (const Tenant& t : tenants) shares.push_back(t.share);
  return shares;
}

std::vector<uint32_t> assign_tenants(size_t requests, std::span<const double> shares,
                                     uint64_t seed) {
  std::vector<double> cumulative;
  double sum = 0;
  for (double s : shares) cumulative.push_back(sum += s);
  std::mt19937_64 rng(seed);  // mt19937_64's output is fixed by the standard
  std::vector<uint32_t> out;
  out.reserve(requests);
  for (size_t i = 0; i < requests; ++i) {
    // 53 random bits as a double in [0, sum): uniform_real_distribution's algorithm is not fixed.
    const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53 * sum;
    size_t t = 0;
    while (t + 1 < cumulative.size() && u >= cumulative[t]) ++t;
    out.push_back(static_cast<uint32_t>(t));
  }
  return out;
}

std::string tenant_keys_toml(std::span<const Tenant> tenants) {
  std::ostringstream toml;
  for (const Tenant& t : tenants) {
    toml << "[[keys]]\nname = \"" << t.name << "\"\nkey_env = \"" << t.key_env
         << "\"\npriority = " << t.priority << "\n\n";
  }
  return toml.str();
}

std::string queue_toml(const FlowControlSettings& flow) {
  std::ostringstream toml;
  toml << "[queue]\nmax_requests = " << flow.queue_max_requests
       << "\nmax_wait_ms = " << flow.queue_max_wait_ms << "\n\n";
  return toml.str();
}

}  // namespace rolter::bench
