// DiscoveredInstances: what the last good DNS lookup of each discovered provider found (SPEC §17),
// kept outside every snapshot so that a reload, or a gateway's next document from its control
// plane, is built with the same instances.
//
//   DiscoveredInstances found;
//   if (found.set("vllm", "dns://vllm:8000", {{"10.0.0.7", 8000}})) republish();  // background
//   uint64_t generation = found.apply(config);  // before build_snapshot(): fills `instances`
//
// Each change bumps the generation, so a publisher can tell whether the published snapshot was
// built with the newest sets. The instances' learned state (load, breaker, KV index, latency
// models) is the LoadTracker's, keyed by provider and base URL: an address that returns finds it.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "config/config.h"
#include "config/discover.h"

namespace rolter {

class DiscoveredInstances {
 public:
  // Replaces what `provider`'s lookup of `url` found (sorted and deduplicated here). Returns
  // true, and bumps the generation, when the set changed.
  bool set(const std::string& provider, const std::string& url,
           std::vector<DiscoveredAddress> addresses) EXCLUDES(mu_);
  // Forgets a provider (its `discover` left the config, or changed URL).
  void forget(const std::string& provider, const std::string& url) EXCLUDES(mu_);
  // What `provider`'s lookup of `url` last found; empty before the first good lookup.
  std::vector<DiscoveredAddress> get(const std::string& provider, const std::string& url) const
      EXCLUDES(mu_);

  // Fills the instances of every provider of `config` that has `discover` with what its lookup
  // found (none before the first good lookup). Returns the generation applied.
  uint64_t apply(Config& config) const EXCLUDES(mu_);
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

 private:
  using Key = std::pair<std::string, std::string>;  // provider, url
  mutable Mutex mu_;
  std::map<Key, std::vector<DiscoveredAddress>> found_ GUARDED_BY(mu_);
  std::atomic<uint64_t> generation_{0};
};

}  // namespace rolter
