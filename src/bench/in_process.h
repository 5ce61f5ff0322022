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
#include <span>
#include <string>
#include <string_view>
#include <tl/expected.hpp>

#include "bench/replay_result.h"
#include "bench/trace.h"
#include "sim/engine_model.h"

namespace rolter::bench {

struct InProcessOptions {
  size_t engines = 8;
  // Per engine; kv_blocks and block_size inside `model` are ignored in favour of
  // kv_tokens_per_engine / block_size.
  size_t kv_tokens_per_engine = 1'000'000;
  size_t block_size = 16;
  sim::EngineModelParams model;
  double speedup = 1.0;    // arrival times are divided by this
  uint64_t seed = 1;       // the balancer's SeededRandom
  double sample_ms = 100;  // virtual-time interval between load-imbalance samples
  double kv_event_delay_ms = 10;  // from a KV change on an engine to the gateway's index
  bool progress = true;
};

tl::expected<RunSamples, std::string> replay_in_process(std::span<const TraceRequest> trace,
                                                        std::string_view strategy,
                                                        const InProcessOptions& options);

}  // namespace rolter::bench
