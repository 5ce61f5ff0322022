// LatencyModel: how long a simulated engine takes to answer, as plain durations.
//
// The model is deliberately separate from the engine and the server so that queueing, prefill
// cost per uncached token and batch-dependent decode can be added here without touching I/O.
// Today it is two constants: a time to first token and a per-token decode interval, both scaled
// by a global time scale (0 = answer instantly, useful for fast tests).
//
// Thread-safety: immutable after construction; safe to share between threads.
//
// Example:
//   LatencyModel model({.ttft_ms = 20, .token_ms = 5, .time_scale = 1.0});
//   auto first = model.token_offset(/*prompt_tokens=*/12, /*index=*/0);  // 20 ms
#pragma once

#include <chrono>
#include <cstddef>

namespace rolter::sim {

struct LatencyParams {
  double ttft_ms = 20;      // request arrival -> first output token
  double token_ms = 5;      // interval between two output tokens
  double time_scale = 1.0;  // multiplies every delay; 0 disables delays altogether
};

class LatencyModel {
 public:
  using Duration = std::chrono::nanoseconds;

  explicit LatencyModel(const LatencyParams& params);

  const LatencyParams& params() const { return params_; }

  // True when every delay is zero, so callers may skip timers entirely.
  bool instant() const { return params_.time_scale <= 0; }

  // Offset from request arrival at which streamed output token `index` (0-based) is emitted:
  // ttft + index * token.
  Duration token_offset(size_t prompt_tokens, size_t index) const;

  // When a non-streaming completion of `output_tokens` tokens is answered: ttft + n * token.
  Duration completion_time(size_t prompt_tokens, size_t output_tokens) const;

  // When an embedding request is answered: one prefill, no decode.
  Duration embedding_time(size_t input_tokens) const;

 private:
  Duration scaled_ms(double ms) const;

  LatencyParams params_;
};

}  // namespace rolter::sim
