// Turns a configuration document into a published snapshot, for every way rolter gets its routing
// (SPEC §1): the all-in-one server (its control plane's document), and a gateway node (the
// document its control plane publishes, or the copy it saved).
//
// prepare() validates the text with the code of `rolter check`, builds the snapshot and returns
// the publication without running it, so a caller can first make the change durable.
//
// Thread-safety: prepare() may be called from any thread; the returned publication too.
#pragma once

#include <tl/expected.hpp>

#include <functional>
#include <string>
#include <vector>

#include "balance/balancer_factory.h"
#include "fleet/load_tracker.h"
#include "snapshot/snapshot_store.h"

namespace rolter {

class Metrics;

class SnapshotPublisher {
 public:
  // Everything given must outlive the object and its snapshots.
  SnapshotPublisher(SnapshotStore& store, LoadTracker& tracker, Metrics* metrics,
                    std::string source_name)
      : store_(store), tracker_(tracker), metrics_(metrics), source_name_(std::move(source_name)) {}

  tl::expected<std::function<void()>, std::vector<std::string>> prepare(const std::string& text,
                                                                        uint64_t version);

 private:
  SnapshotStore& store_;
  LoadTracker& tracker_;
  Metrics* metrics_;
  std::string source_name_;
};

}  // namespace rolter
