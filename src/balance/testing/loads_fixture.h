// LoadsFixture: owns a set of load signals and hands out a Loads view over them, so tests
// and benchmarks can build the input a balancer reads without a LoadTracker.
//
// Thread-safety: set()/add() are relaxed atomic stores, like the real tracker's; the fixture itself
// must outlive every Loads view taken from it. Header-only; for tests and benchmarks only.
//
//   LoadsFixture fixture({3, 0, 1});
//   auto idx = lb->pick(ctx, fixture.view());
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "balance/loads.h"

namespace rolter {

class LoadsFixture {
 public:
  // n idle candidates.
  explicit LoadsFixture(size_t n) : LoadsFixture(std::vector<uint32_t>(n, 0)) {}

  // One candidate per entry, starting at that load.
  explicit LoadsFixture(const std::vector<uint32_t>& loads)
      : counters_(std::make_unique<LoadSignals[]>(loads.size())) {
    pointers_.reserve(loads.size());
    for (size_t i = 0; i < loads.size(); ++i) {
      counters_[i].in_flight.store(loads[i], std::memory_order_relaxed);
      pointers_.push_back(&counters_[i]);
    }
  }

  LoadsFixture(const LoadsFixture&) = delete;
  LoadsFixture& operator=(const LoadsFixture&) = delete;

  size_t size() const { return pointers_.size(); }
  void set(size_t i, uint32_t load) { counters_[i].in_flight.store(load, std::memory_order_relaxed); }
  void add(size_t i, int32_t delta) {
    counters_[i].in_flight.fetch_add(static_cast<uint32_t>(delta), std::memory_order_relaxed);
  }

  // A view valid while this fixture lives; building it does not allocate.
  Loads view() const { return Loads(std::span<const LoadSignals* const>(pointers_)); }
  // The signals themselves, e.g. to set an engine-reported load.
  LoadSignals& signals(size_t i) { return counters_[i]; }

 private:
  // An array, not a vector: atomics cannot move, and the pointers below must stay valid.
  std::unique_ptr<LoadSignals[]> counters_;
  std::vector<const LoadSignals*> pointers_;
};

}  // namespace rolter
