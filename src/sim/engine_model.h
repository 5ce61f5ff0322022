// EngineModel: the timing and cache behaviour of one vLLM-like engine, in virtual time, free of
// any I/O, clocks or global randomness (SPEC section 12).
//
// The same model backs the HTTP engines of rolter-sim (which map wall-clock milliseconds since
// start onto model time and pace SSE chunks with next_event_ms()) and in-process benchmarks (a
// discrete-event driver that runs many engines in one thread by always advancing the engine whose
// next_event_ms() is earliest).
//
// What it models:
//   - A FIFO queue in front of `max_batch` running sequences. The head of the queue is admitted
//     when a slot is free and its KV blocks fit (see kv_cache.h); otherwise it, and everything
//     behind it, waits. Admission happens inside submit(), cancel() and advance().
//   - On admission: the request's cache hit is the run of leading full blocks already resident.
//     If it names a LoRA adapter that is not among the `max_loras` most recently used ones, it
//     first pays `lora_load_ms`. Then prefill costs `prefill_ms_base` + `prefill_ms_per_token` per
//     UNCACHED prompt token; the first output token is emitted when prefill ends.
//   - Prefill is compute-bound, so an engine prefills one sequence at a time, in admission order:
//     a sequence's prefill starts when the previous one's ends. Concurrent prefills on a GPU share
//     its compute, so together they take as long as one after another; this is why a cache hit
//     shortens the wait of every request queued behind it, not only its own. A sequence
//     cancelled before its first token gives back the prefill compute it has not used, as an
//     engine's abort does, when no prefill is scheduled after it; those scheduled after one keep
//     the times they were given.
//   - Decode: each later token follows the previous one by
//     `decode_ms_base + decode_ms_per_seq * running()` (batch size taken when the previous token
//     was emitted), so a fuller batch decodes every sequence more slowly.
//   - Chunked prefill (`prefill_chunk_tokens` > 0, vLLM's --enable-chunked-prefill): while the
//     engine is computing a prefill, every decode step also carries up to prefill_chunk_tokens
//     of it, so a decode interval taken at time t grows by
//     min(prefill_chunk_tokens, prefill tokens still to compute at t) * prefill_ms_per_token.
//     The prefills themselves keep their cost. 0 = decode steps never carry prefill (the model
//     as it was before this option; every result is unchanged).
//   - KV pulled from a prefill engine (`ModelRequest::kv_from_remote`, vLLM's NixlConnector on a
//     decode instance): the prompt is not computed. Its full blocks already resident cost
//     nothing; every other full block is pulled for `kv_transfer_ms_per_block` and becomes
//     resident (BlockStored as for any stored block). The transfer neither occupies the prefill
//     pipeline nor carries into decode steps; the first token is out when it ends.
//   - Held blocks (`ModelRequest::hold_kv`, a prefill instance's side of the same handshake):
//     when the request finishes, its blocks stay referenced (so they cannot be evicted) until
//     release_held(); the caller reads their ids with held_block_ids().
//   - Every duration is multiplied by `time_scale` (0 = everything happens at admission time).
//   - Only prompt blocks are cached; generated tokens take no KV room in this model.
//
// Time contract: calls pass a non-decreasing `now_ms`. submit() and cancel() first process
// everything due at or before `now_ms` (their events are kept and handed out by the next
// advance()), so callers may submit without advancing first. Events carry their exact virtual
// time `at_ms`, which is <= the `now_ms` of the advance() that returns them.
//
// Determinism: the same sequence of calls yields the same events, bit for bit. Ties between
// sequences due at the same instant are broken by admission order.
//
// Thread-safety: none. One owner makes every call; the KV event sink is called synchronously
// from inside submit()/cancel()/advance().
//
//   EngineModel model({.kv_blocks = 1024, .block_size = 16});
//   model.submit(0, {.id = 1, .tokens = ids, .output_tokens = 8});
//   std::vector<ModelEvent> events;
//   while (auto t = model.next_event_ms()) model.advance(*t, events);
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/kv_cache.h"

namespace rolter::sim {

struct EngineModelParams {
  size_t kv_blocks = 8192;             // KV capacity is kv_blocks * block_size tokens
  size_t block_size = 16;              // vLLM's default block size
  size_t max_batch = 64;               // concurrent running sequences
  double prefill_ms_base = 0;          // fixed cost of every prefill (scheduling, first kernel)
  double prefill_ms_per_token = 0.05;  // per UNCACHED prompt token
  double decode_ms_base = 5;           // per-token decode interval with an empty batch
  double decode_ms_per_seq = 0.1;      // added to the decode interval per running sequence
  size_t max_loras = 8;                // adapters resident at once (vLLM --max-loras)
  double lora_load_ms = 50;            // loading an adapter that is not resident
  double time_scale = 1.0;             // multiplies every duration above
  // Pulling one KV block from a prefill engine (kv_from_remote), ms; 0.02 ms = 1 ms per 50
  // blocks, roughly a 16-token block of a 7B model over an RDMA link.
  double kv_transfer_ms_per_block = 0.02;
  // Prefill tokens each decode step carries while a prefill is running; 0 = none (see above).
  size_t prefill_chunk_tokens = 0;
  // When false, advance() reports only kFirstToken and kFinished (decode is still stepped per
  // token): a benchmark that needs no per-token events saves most of the output.
  bool token_events = true;
};

struct ModelRequest {
  uint64_t id = 0;               // unique among the requests the model holds
  std::vector<uint32_t> tokens;  // prompt token ids (see tokenizer/tokenizer.h)
  size_t output_tokens = 0;      // tokens to generate
  std::string adapter;           // LoRA adapter name; empty = the base model
  // The prompt's KV comes from a prefill engine: non-resident full blocks are pulled, nothing is
  // prefilled (ModelEvent::pulled_blocks says how many were pulled).
  bool kv_from_remote = false;
  // Keep the prompt's blocks referenced after the request finishes, until release_held(id).
  bool hold_kv = false;
};

struct ModelEvent {
  enum class Kind {
    kFirstToken,  // prefill done; the first output token (if output_tokens > 0) is out
    kToken,       // another output token
    kFinished,    // all output tokens are out; the request left the model
  };
  Kind kind = Kind::kFirstToken;
  uint64_t id = 0;
  double at_ms = 0;          // virtual time the event happened
  size_t cached_tokens = 0;  // prompt tokens served from the prefix cache (whole blocks)
  size_t prompt_tokens = 0;
  size_t tokens_emitted = 0;  // output tokens out so far, this event's included
  double queued_ms = 0;       // time spent waiting for admission
  bool lora_miss = false;     // the adapter had to be loaded
  // kv_from_remote requests: full prompt blocks pulled from the prefill engine (set on every
  // event of the request); 0 for the others.
  size_t pulled_blocks = 0;
};

class EngineModel {
 public:
  explicit EngineModel(EngineModelParams params, KvEventSink* sink = nullptr);

  const EngineModelParams& params() const { return params_; }

  // Queues a request at `now_ms` and admits what fits. REQUIRES: `request.id` is not held.
  void submit(double now_ms, ModelRequest request);

  // Removes request `id` at `now_ms` (waiting or running), releasing its KV references, and
  // admits what now fits. No event is reported for it. Returns false when `id` is not held
  // (already finished, or never submitted).
  bool cancel(double now_ms, uint64_t id);

  // The earliest virtual time at which advance() has something to report; nullopt when idle.
  std::optional<double> next_event_ms() const;

  // Processes everything due at or before `now_ms`, appending the events in time order.
  void advance(double now_ms, std::vector<ModelEvent>& out);

  size_t running() const { return running_.size(); }
  size_t waiting() const { return waiting_.size(); }
  // Fraction of KV blocks referenced by running requests (vLLM's gpu_cache_usage_perc).
  double cache_usage() const;
  // Fraction of KV blocks resident, referenced or kept as prefix cache (LMCache-like occupancy).
  double occupancy() const;
  // Prompt tokens served from the prefix cache, and prompt tokens looked up, since creation
  // (vLLM's prefix_cache_hits_total / prefix_cache_queries_total, counted at admission).
  uint64_t prefix_hit_tokens() const { return prefix_hit_tokens_; }
  uint64_t prefix_query_tokens() const { return prefix_query_tokens_; }
  // Adapter loads (a request for an adapter that was not resident), since creation.
  uint64_t lora_misses() const { return lora_misses_; }
  // Prompt tokens actually prefilled (uncached, not pulled) since creation.
  uint64_t prefill_computed_tokens() const { return prefill_computed_tokens_; }
  // KV blocks pulled for kv_from_remote requests since creation.
  uint64_t kv_blocks_pulled() const { return kv_blocks_pulled_; }

  // A finished hold_kv request's blocks: their physical ids (KvCache::block_ids) and hashes, in
  // prompt order. nullopt when `id` holds nothing (not finished yet, released, or cancelled).
  struct HeldBlocks {
    std::vector<uint32_t> ids;
    std::vector<uint64_t> hashes;
  };
  std::optional<HeldBlocks> held_block_ids(uint64_t id) const;
  // Drops the references of a finished hold_kv request (the blocks become ordinary prefix cache)
  // and admits what now fits. False when `id` holds nothing.
  bool release_held(double now_ms, uint64_t id);
  size_t held() const { return held_.size(); }
  // The resident adapters, most recently used first.
  const std::list<std::string>& resident_adapters() const { return adapters_; }

  const KvCache& kv_cache() const { return cache_; }
  // Drops every unreferenced block (and publishes AllBlocksCleared).
  void reset_prefix_cache(double now_ms);

 private:
  struct Sequence {
    ModelRequest request;
    double arrival_ms = 0;
    double admitted_ms = 0;
    uint64_t order = 0;  // admission order, for ties
    double next_ms = 0;  // when the next token is due
    double prefill_start_ms = 0;  // when its prefill starts (its end is next_ms until prefilled)
    size_t emitted = 0;
    bool prefilled = false;  // the first-token event is out
    size_t cached_tokens = 0;
    bool lora_miss = false;
    size_t pulled_blocks = 0;
    KvCache::Ticket ticket;
  };

  // Processes due tokens up to `now_ms` into ready_.
  void run_until(double now_ms);
  void admit_waiting(double now_ms);
  // True when the adapter was not resident (and is now).
  bool touch_adapter(const std::string& adapter);
  double scaled(double ms) const { return ms * params_.time_scale; }
  // Releases the request's KV references, or moves them to held_ when `hold`.
  void finish(uint64_t id, bool hold = false);
  // The unscaled decode interval of a token emitted at `at`, chunked prefill included.
  double decode_interval_ms(double at);
  // Prefill tokens scheduled but not yet computed at `at`; forgets prefills done by then.
  double prefill_tokens_left(double at);

  EngineModelParams params_;
  KvCache cache_;
  double clock_ms_ = 0;
  double prefill_free_ms_ = 0;  // when the engine's prefill compute is next free
  uint64_t next_order_ = 0;
  std::deque<Sequence> waiting_;
  std::unordered_map<uint64_t, Sequence> running_;
  // (due time, admission order) -> request id: the next token of every running sequence.
  std::map<std::pair<double, uint64_t>, uint64_t> due_;
  std::vector<ModelEvent> ready_;    // processed but not yet handed out by advance()
  std::list<std::string> adapters_;  // resident adapters, most recently used at the front
  uint64_t prefix_hit_tokens_ = 0;
  uint64_t prefix_query_tokens_ = 0;
  uint64_t lora_misses_ = 0;
  uint64_t prefill_computed_tokens_ = 0;
  uint64_t kv_blocks_pulled_ = 0;
  // Scheduled prefills in order (they run one after another), while prefill_chunk_tokens > 0.
  struct Prefill {
    double start_ms = 0;
    double end_ms = 0;
    double tokens = 0;
  };
  std::deque<Prefill> prefills_;
  // Finished hold_kv requests' blocks, by request id.
  std::unordered_map<uint64_t, KvCache::Ticket> held_;
};

}  // namespace rolter::sim
