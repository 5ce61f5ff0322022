// Helpers for the engine model's tests: token runs, running a model until it is idle, and finding
// one request's event. Header-only; tests only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "sim/engine_model.h"

namespace rolter::sim {

// Tokens first, first+1, ..., first+n-1.
inline std::vector<uint32_t> seq_tokens(uint32_t first, size_t n) {
  std::vector<uint32_t> out(n);
  std::iota(out.begin(), out.end(), first);
  return out;
}

// Runs the model until idle; returns every event.
inline std::vector<ModelEvent> drain(EngineModel& model) {
  std::vector<ModelEvent> out;
  while (auto t = model.next_event_ms()) model.advance(*t, out);
  return out;
}

// Request `id`'s event of `kind`, or null.
inline const ModelEvent* find(const std::vector<ModelEvent>& events, uint64_t id,
                              ModelEvent::Kind kind) {
  for (const auto& e : events) {
    if (e.id == id && e.kind == kind) return &e;
  }
  return nullptr;
}

}  // namespace rolter::sim
