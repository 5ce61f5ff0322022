// WorkerCells: one slab of 64-bit counters per worker thread, for the request path's counters and
// histograms (observe/sharded_series.h), so that two workers counting the same route never write
// the same cache line and never take a lock.
//
// An instrument reserves a run of cells once; the run has the same index in every slab. A thread
// writes only its own slab: a worker's slot is its index + 1 (set once, when its thread starts),
// and every other thread (a background service, a test) shares slot 0. The value of a cell is the
// sum of its slabs, read when /metrics is rendered.
//
// Slabs grow by chunks of kChunkCells cells per slot (4 KiB each: no two slots share a line), and
// a chunk never moves, so writers need no lock while an instrument is added. Runs given back
// (a reload removed a route) are reused by the next run of the same length, zeroed first.
//
//   WorkerCells cells(/*workers=*/2);                 // slots 0, 1, 2
//   uint32_t run = cells.allocate(3);                 // kNoCells when full
//   cells.cell(WorkerCells::thread_slot(), run).fetch_add(1, std::memory_order_relaxed);
//   uint64_t total = cells.sum(run);
//
// Thread-safety: allocate() and release() may be called from any thread (they lock); cell() and
// sum() from any thread at any time on a run allocated and not yet released.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "common/mutex.h"

namespace rolter {

class WorkerCells {
 public:
  static constexpr uint32_t kChunkCells = 512;  // 4 KiB per slot and chunk
  // 1 << 20 cells: some 50,000 histograms, far beyond any configuration's routes and targets.
  static constexpr uint32_t kMaxChunks = 2048;
  static constexpr uint32_t kNoCells = UINT32_MAX;

  // One slab per worker, and slot 0 for every other thread.
  explicit WorkerCells(unsigned workers);
  ~WorkerCells();
  WorkerCells(const WorkerCells&) = delete;
  WorkerCells& operator=(const WorkerCells&) = delete;

  unsigned slots() const { return slots_; }

  // Reserves `n` consecutive cells (1 <= n <= kChunkCells), zero in every slab; kNoCells when the
  // slabs are full.
  uint32_t allocate(uint32_t n) EXCLUDES(mu_);
  // Gives back a run of `n` cells. REQUIRES: nothing writes it any more.
  void release(uint32_t first, uint32_t n) EXCLUDES(mu_);

  // The cell `index` of `slot`'s slab; a slot beyond the slabs is slot 0.
  std::atomic<uint64_t>& cell(unsigned slot, uint32_t index) {
    if (slot >= slots_) slot = 0;
    return chunks_[index / kChunkCells].load(
        std::memory_order_acquire)[slot * kChunkCells + index % kChunkCells];
  }
  // The cell summed over every slot.
  uint64_t sum(uint32_t index);

  // The calling thread's slot: what set_thread_slot() gave it, 0 if never called.
  static unsigned thread_slot() { return t_slot_; }
  // Called once by a worker thread as it starts, with its index + 1.
  static void set_thread_slot(unsigned slot) { t_slot_ = slot; }

 private:
  using Chunk = std::atomic<uint64_t>[];

  // Constant-initialized, so reading it is one load, with no wrapper call.
  static constinit inline thread_local unsigned t_slot_ = 0;

  const unsigned slots_;
  // A chunk holds kChunkCells cells for each slot, slot after slot. Set once, never moved.
  std::array<std::atomic<std::atomic<uint64_t>*>, kMaxChunks> chunks_{};
  Mutex mu_;
  std::vector<std::unique_ptr<Chunk>> owned_ GUARDED_BY(mu_);
  uint32_t next_ GUARDED_BY(mu_) = 0;  // the first cell never handed out
  std::map<uint32_t, std::vector<uint32_t>> free_ GUARDED_BY(mu_);  // runs given back, by length
};

}  // namespace rolter
