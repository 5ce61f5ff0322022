// Turns a configuration document into a published snapshot, for every way rolter gets its routing
// (SPEC §1): the all-in-one server (its control plane's document), and a gateway node (the
// document its control plane publishes, or the copy it saved).
//
// prepare() validates the text with the code of `rolter check`, builds the snapshot and returns
// the publication without running it, so a caller can first make the change durable.
//
// Providers found by DNS (SPEC §17) get the instances their last good lookup found, at every
// prepare(), and refresh_discovered() republishes the running config when a lookup changed them:
// an instance comes or goes with no reload.
//
// Thread-safety: prepare() and refresh_discovered() may be called from any thread; the returned
// publication too.
#pragma once

#include <tl/expected.hpp>

#include <functional>
#include <string>
#include <vector>

#include "balance/balancer_factory.h"
#include "common/mutex.h"
#include "fleet/discovered_instances.h"
#include "fleet/load_tracker.h"
#include "snapshot/snapshot_store.h"

namespace rolter {

class Metrics;

class SnapshotPublisher {
 public:
  // Everything given must outlive the object and its snapshots. `discovered` (may be null: no
  // provider is discovered) is what the DNS lookups found.
  SnapshotPublisher(SnapshotStore& store, LoadTracker& tracker, Metrics* metrics,
                    std::string source_name, const DiscoveredInstances* discovered = nullptr)
      : store_(store),
        tracker_(tracker),
        metrics_(metrics),
        source_name_(std::move(source_name)),
        discovered_(discovered) {}

  tl::expected<std::function<void()>, std::vector<std::string>> prepare(const std::string& text,
                                                                        uint64_t version)
      EXCLUDES(publish_mu_);

  // When the published snapshot was built with older discovered instances than the newest,
  // rebuilds its config (same version) with the newest and publishes it, unless a reload
  // published another snapshot meanwhile; the next call then looks again. Returns whether it
  // published.
  bool refresh_discovered() EXCLUDES(publish_mu_);

 private:
  BalancerDeps deps_for(const Config& config);

  SnapshotStore& store_;
  LoadTracker& tracker_;
  Metrics* metrics_;
  std::string source_name_;
  const DiscoveredInstances* discovered_;
  // Held while publishing: a publication and the generation it was built with change together.
  Mutex publish_mu_;
  uint64_t published_generation_ GUARDED_BY(publish_mu_) = 0;
};

}  // namespace rolter
