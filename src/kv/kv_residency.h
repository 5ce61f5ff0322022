// KvResidency: everything the gateway knows about one instance's KV cache from its KV-event
// stream (SPEC §6.8): the block index, the stream's state and its counters.
//
// Owned by the LoadTracker's InstanceState (fleet/load_tracker.h), so it outlives snapshots and a
// reload does not forget what the engine holds; balancers hold a const pointer to it through
// CandidateSpec::kv. The instance's KV-event subscriber (collect/kv_events/) is its only writer.
//
// A pick uses the index only while the stream is live: a stale, disconnected or gapped stream may
// be missing events, so its blocks are not trusted and the instance scores neutral.
//
// Thread-safety: every member may be used from any thread (atomics; KvIndex has its own lock).
#pragma once

#include <atomic>
#include <cstdint>

#include "kv/kv_index.h"

namespace rolter {

// Values of rolter_kv_events_state{instance}.
enum class KvStreamState : uint8_t { kDisconnected = 0, kLive = 1, kStale = 2, kGap = 3 };

struct KvResidency {
  KvIndex index{1'000'000};
  // Set by the subscriber; a pick reads it once.
  std::atomic<KvStreamState> state{KvStreamState::kDisconnected};
  // Whether a subscriber runs for this instance at all (kv_events configured).
  std::atomic<bool> subscribed{false};
  // Tokens per block on the engine (providers.kv_events.block_size).
  std::atomic<uint32_t> block_size{16};

  // The seq of the last batch the index reflects, kept across subscribers: a stream that resumes
  // (the subscriber reconnects, or the instance leaves DNS and returns) goes on from it when its
  // seqs follow on, and is repaired or rebuilt as any gap when they do not. kNoSeq = none.
  static constexpr uint64_t kNoSeq = UINT64_MAX;
  std::atomic<uint64_t> last_seq{kNoSeq};

  // Counters (rolter_kv_events_*_total).
  std::atomic<uint64_t> events{0};
  std::atomic<uint64_t> gaps{0};
  std::atomic<uint64_t> decode_errors{0};

  bool live() const { return state.load(std::memory_order_acquire) == KvStreamState::kLive; }
};

}  // namespace rolter
