// A synthetic multi-turn workload in the trace's own shape: sessions × turns, a few system
// prompts shared by many sessions, Poisson session arrivals and exponential think time between
// turns. Each turn's prompt is the system prompt, the whole conversation so far and a new user
// message, so consecutive turns of a session share a growing prefix, exactly like a chat client.
//
//   auto trace = generate_synthetic({.sessions = 100, .turns = 4, .seed = 7});
//
// Thread-safety: pure; equal options give equal traces.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "bench/trace.h"

namespace rolter::bench {

struct SyntheticOptions {
  size_t sessions = 200;
  size_t turns = 5;
  size_t system_prompts = 4;        // distinct system prompts, each shared by many sessions
  size_t system_prompt_blocks = 4;  // 512-token blocks per system prompt
  size_t user_blocks = 1;           // new blocks a user message adds per turn
  uint32_t output_tokens = 200;     // answer length; answers join the next turn's prompt
  double session_rate = 2.0;        // new sessions per second (Poisson)
  double think_time_ms = 5000;      // mean pause between a turn and the next (exponential)
  uint64_t seed = 1;
};

// Requests sorted by timestamp; session ids are "s<N>".
std::vector<TraceRequest> generate_synthetic(const SyntheticOptions& options);

}  // namespace rolter::bench
