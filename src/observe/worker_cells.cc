#include "observe/worker_cells.h"

namespace rolter {

WorkerCells::WorkerCells(unsigned workers) : slots_(workers + 1) {}

WorkerCells::~WorkerCells() = default;

uint32_t WorkerCells::allocate(uint32_t n) {
  if (n == 0 || n > kChunkCells) return kNoCells;
  MutexLock lock(mu_);
  if (auto it = free_.find(n); it != free_.end() && !it->second.empty()) {
    const uint32_t first = it->second.back();
    it->second.pop_back();
    for (unsigned slot = 0; slot < slots_; ++slot) {
      for (uint32_t i = 0; i < n; ++i) cell(slot, first + i).store(0, std::memory_order_relaxed);
    }
    return first;
  }
  // A run stays within one chunk: skip to the next one when it does not fit in this one's rest.
  uint32_t first = next_;
  if (first % kChunkCells + n > kChunkCells) first += kChunkCells - first % kChunkCells;
  const uint32_t chunk = (first + n - 1) / kChunkCells;
  if (chunk >= kMaxChunks) return kNoCells;
  if (chunks_[chunk].load(std::memory_order_relaxed) == nullptr) {
    // Value-initialized: every cell starts at 0.
    owned_.push_back(std::make_unique<Chunk>(static_cast<size_t>(slots_) * kChunkCells));
    chunks_[chunk].store(owned_.back().get(), std::memory_order_release);
  }
  next_ = first + n;
  return first;
}

void WorkerCells::release(uint32_t first, uint32_t n) {
  if (first == kNoCells) return;
  MutexLock lock(mu_);
  free_[n].push_back(first);
}

uint64_t WorkerCells::sum(uint32_t index) {
  uint64_t total = 0;
  for (unsigned slot = 0; slot < slots_; ++slot) {
    total += cell(slot, index).load(std::memory_order_relaxed);
  }
  return total;
}

}  // namespace rolter
