// Loads: a read-only view of each candidate's current in-flight count on this node.
//
// The counters live in the LoadTracker (fleet/load_tracker.h) and are updated by workers with
// relaxed atomics; a Loads view reads them on demand, so building one costs no allocation and
// no lock. Values may change between two reads of the same index: strategies read each once
// per pick when they need a consistent value.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

namespace rolter {

using InFlightCounter = std::atomic<uint32_t>;

class Loads {
 public:
  Loads() = default;
  // counters[i] is candidate i's counter. The span and the counters must outlive this view.
  explicit Loads(std::span<const InFlightCounter* const> counters) : counters_(counters) {}

  size_t size() const { return counters_.size(); }
  uint32_t operator[](size_t i) const { return counters_[i]->load(std::memory_order_relaxed); }

 private:
  std::span<const InFlightCounter* const> counters_;
};

}  // namespace rolter
