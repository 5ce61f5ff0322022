// KvTransferRegistry: the KV blocks that the prefill engines of one rolter-sim process hold for a
// pull, so a decode engine can check a step 2's kv_transfer_params (kv_transfer_params.h) and
// take the blocks, as vLLM's NixlConnector does across instances.
//
// Why a registry and not a message to the other engine's strand: the check and the claim must be
// one atomic step (two decodes racing for one hold: exactly one wins), and a decode must know at
// once whether to answer 503, before it schedules anything. One mutex around a few small maps
// does both; the claimed hold's release is then handed to the prefill engine's own strand by the
// `Release` callback it registered, since only that strand may touch its model.
//
// Transfers work within one rolter-sim process: parameters naming an engine of another process
// (or another run) name no engine here and are refused like any unknown engine.
//
// A hold ends when a decode claims it (pulled) or when drop() is called (the prefill engine's
// --kv-hold-ms timer); either way the prefill engine then releases the blocks, which become
// ordinary prefix cache. The last ended holds of each engine are remembered (kEndedMemory), so a
// refused claim can say whether the blocks were already pulled or expired.
//
// Thread-safety: every method may be called from any thread. Release callbacks are called
// outside the lock.
//
//   registry.add_engine("sim-42-0", "127.0.0.1", 8100, release_on_strand);
//   registry.add_hold("sim-42-0", {.id = 7, .block_ids = ids, .hashes = hashes, .expires = t});
//   auto hold = registry.claim(params, prompt_hashes, Clock::now());  // 503 on error
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include <tl/expected.hpp>

#include "sim/kv_transfer_params.h"

namespace rolter::sim {

class KvTransferRegistry {
 public:
  using Clock = std::chrono::steady_clock;
  // Called when a hold of the engine ends by a claim; must hand the release to the engine's own
  // thread (the claimer runs on another engine's strand).
  using Release = std::function<void(uint64_t hold_id)>;

  struct Hold {
    uint64_t id = 0;  // unique per engine
    std::vector<uint32_t> block_ids;
    std::vector<uint64_t> hashes;  // the prompt's block hash chain, for the prompt check
    Clock::time_point expires;
  };

  // Registers an engine listening on host:port. Replaces an earlier entry of the same id.
  void add_engine(const std::string& engine_id, const std::string& host, uint16_t port,
                  Release release);
  // Holds blocks of a registered engine for a pull (ignored for an unknown engine).
  void add_hold(const std::string& engine_id, Hold hold);
  // Ends a hold without a pull (its time is up). True when it was still held; the caller then
  // releases the blocks itself (no callback).
  bool drop(const std::string& engine_id, uint64_t hold_id);
  // Live holds of an engine.
  size_t holds(const std::string& engine_id) const;

  // Checks step 2's `params` against the live holds and, when they name one, ends it (calling
  // the prefill engine's Release) and returns it. `prompt_hashes` is the block hash chain of the
  // decode's own prompt: blocks of another prompt are refused. The error explains the refusal
  // (without the "kv_transfer_params:" prefix). A hold past its time is refused and dropped.
  tl::expected<Hold, std::string> claim(const KvTransferParams& params,
                                        std::span<const uint64_t> prompt_hashes,
                                        Clock::time_point now);

 private:
  // How many ended holds per engine are remembered for error messages: enough for the holds a
  // test or a gateway's retry looks back on, small enough to scan.
  static constexpr size_t kEndedMemory = 64;

  struct Ended {
    std::vector<uint32_t> block_ids;
    const char* why;  // "pulled" or "expired"
  };
  struct Entry {
    std::string host;
    uint16_t port = 0;
    Release release;
    std::map<uint64_t, Hold> holds;
    std::deque<Ended> ended;
  };

  // REQUIRES: mu_ held.
  static void remember(Entry& entry, std::vector<uint32_t> block_ids, const char* why);
  tl::expected<Entry*, std::string> find_engine(const KvTransferParams& params);

  mutable std::mutex mu_;
  std::map<std::string, Entry, std::less<>> engines_;
};

}  // namespace rolter::sim
