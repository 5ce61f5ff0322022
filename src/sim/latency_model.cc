#include "sim/latency_model.h"

#include <algorithm>
#include <cmath>

namespace rolter::sim {

LatencyModel::LatencyModel(const LatencyParams& params) : params_(params) {
  // Negative inputs would make timers fire in the past; treat them as "no delay".
  params_.ttft_ms = std::max(0.0, params_.ttft_ms);
  params_.token_ms = std::max(0.0, params_.token_ms);
  params_.time_scale = std::max(0.0, params_.time_scale);
}

LatencyModel::Duration LatencyModel::scaled_ms(double ms) const {
  const double ns = ms * params_.time_scale * 1e6;
  return Duration(static_cast<Duration::rep>(std::llround(ns)));
}

LatencyModel::Duration LatencyModel::token_offset(size_t /*prompt_tokens*/, size_t index) const {
  return scaled_ms(params_.ttft_ms + static_cast<double>(index) * params_.token_ms);
}

LatencyModel::Duration LatencyModel::completion_time(size_t /*prompt_tokens*/,
                                                     size_t output_tokens) const {
  return scaled_ms(params_.ttft_ms + static_cast<double>(output_tokens) * params_.token_ms);
}

LatencyModel::Duration LatencyModel::embedding_time(size_t /*input_tokens*/) const {
  return scaled_ms(params_.ttft_ms);
}

}  // namespace rolter::sim
