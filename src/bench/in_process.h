// The in-process replay: drives the real balancer library (make_balancer) against N simulated
// engines (sim/engine_model.h) in virtual time, with no HTTP and a single thread, so a run is fast
// and exactly reproducible for a seed.
//
// The loop is discrete-event. Engines never interact between two arrivals, so before each
// arrival every engine is advanced to the arrival time and the events they report are applied in
// time order (ties: engine order, and engine events before the arrival). Then the balancer picks
// with each engine's in-flight count as its load, observe() records the pick, and the request is
// submitted to the chosen engine.
//
// Disaggregated (`pd` set, SPEC §18): engines 0..P-1 prefill, P..P+D-1 decode. Each arrival is
// decided with the gateway's own decide_split() over the decode engines' KV indexes. A split
// request is picked a prefill engine by the strategy's balancer over the P prefill engines (their
// in-flight as load) and submitted there as {prompt, 1 output token}; when that step finishes,
// the request goes to the decode engine with the least in-flight (ties: the lowest index) with
// kv_from_remote, so the decode engine pulls the blocks it lacks instead of computing them. A
// request that is not split goes straight to the decode engine whose KV index holds the longest
// prefix of it (ties: least in-flight, then the lowest index): it was not split because that
// engine has at most min_uncached_tokens left to compute, and any other decode engine would
// compute more. TTFT, ITL and end-to-end come from the decode step; imbalance is measured over
// the decode engines, which serve the answers.
//
// Hit ratio, both modes: prompt tokens not computed anywhere / prompt tokens, each request's
// prompt counted once. Aggregated and not-split requests: the cached tokens of the engine that
// served it; split requests: the prefill engine's cached tokens (the decode step pulls the rest,
// it does not compute them).
//
// ITL: the model's per-token events (EngineModelParams::token_events is forced on).
//
// KV events: every engine's KV cache reports its changes as the simulator's publisher would send
// them (msgpack, vLLM's array encoding); the replay delivers each batch kv_event_delay_ms later
// through the gateway's own decoder (kv/kv_decode.h) into that engine's KV index, which
// precise_cache_aware and kv_cost read. The delay stands for the engine's publish interval plus
// transport, so those strategies see the cache as a real gateway would: a little behind.
//
//   auto samples = replay_in_process(trace, "power_of_two", options);
//
// Thread-safety: a call owns everything it touches; concurrent calls are independent.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tl/expected.hpp>

#include "bench/pd_split.h"
#include "bench/replay_result.h"
#include "bench/trace.h"
#include "sim/engine_model.h"

namespace rolter::bench {

// Per-engine and per-request detail of one run, for tests and diagnosis.
struct InProcessDetail {
  struct Engine {
    uint64_t requests = 0;                 // steps submitted to it (prefill and decode steps)
    uint64_t prefill_computed_tokens = 0;  // EngineModel::prefill_computed_tokens()
    uint64_t kv_blocks_pulled = 0;         // EngineModel::kv_blocks_pulled()
  };
  struct Request {
    int prefill_engine = -1;  // -1: not split
    int engine = -1;          // the engine that streamed the answer (the decode engine)
    double arrival_ms = 0;
    double prefill_done_ms = -1;  // the prefill step's answer; -1 when not split
    double first_token_ms = -1;   // the answer's first token
    double finished_ms = -1;
  };
  std::vector<Engine> engines;
  std::vector<Request> requests;  // indexed like the trace
};

struct InProcessOptions {
  size_t engines = 8;
  // Per engine; kv_blocks and block_size inside `model` are ignored in favour of
  // kv_tokens_per_engine / block_size.
  size_t kv_tokens_per_engine = 1'000'000;
  size_t block_size = 16;
  sim::EngineModelParams model;
  double speedup = 1.0;           // arrival times are divided by this
  uint64_t seed = 1;              // the balancer's SeededRandom
  double sample_ms = 100;         // virtual-time interval between load-imbalance samples
  double kv_event_delay_ms = 10;  // from a KV change on an engine to the gateway's index
  bool progress = true;
  // Disaggregated: P prefill + D decode engines (P + D must equal `engines`); nullopt: aggregated.
  std::optional<PdSplit> pd;
  uint64_t min_uncached_tokens = 512;  // the route's min_uncached_tokens (SPEC §18)
  InProcessDetail* detail = nullptr;   // filled when set
};

tl::expected<RunSamples, std::string> replay_in_process(std::span<const TraceRequest> trace,
                                                        std::string_view strategy,
                                                        const InProcessOptions& options);

}  // namespace rolter::bench
