#include "fleet/discovered_instances.h"

#include <algorithm>

namespace rolter {

bool DiscoveredInstances::set(const std::string& provider, const std::string& url,
                              std::vector<DiscoveredAddress> addresses) {
  std::sort(addresses.begin(), addresses.end());
  addresses.erase(std::unique(addresses.begin(), addresses.end()), addresses.end());
  MutexLock lock(mu_);
  auto [it, inserted] = found_.try_emplace(Key{provider, url});
  if (!inserted && it->second == addresses) return false;
  it->second = std::move(addresses);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  return true;
}

void DiscoveredInstances::forget(const std::string& provider, const std::string& url) {
  MutexLock lock(mu_);
  if (found_.erase(Key{provider, url}) > 0) generation_.fetch_add(1, std::memory_order_acq_rel);
}

std::vector<DiscoveredAddress> DiscoveredInstances::get(const std::string& provider,
                                                        const std::string& url) const {
  MutexLock lock(mu_);
  auto it = found_.find(Key{provider, url});
  return it == found_.end() ? std::vector<DiscoveredAddress>{} : it->second;
}

uint64_t DiscoveredInstances::apply(Config& config) const {
  MutexLock lock(mu_);
  // Read under the lock: set() bumps it under the same lock, so the sets and the generation
  // returned agree.
  const uint64_t applied = generation_.load(std::memory_order_acquire);
  for (ProviderConfig& provider : config.providers) {
    if (!provider.discover) continue;
    provider.instances.clear();
    auto it = found_.find(Key{provider.name, provider.discover->url});
    if (it == found_.end()) continue;
    for (const DiscoveredAddress& address : it->second) {
      provider.instances.push_back(discovered_instance(*provider.discover, address));
    }
  }
  return applied;
}

}  // namespace rolter
