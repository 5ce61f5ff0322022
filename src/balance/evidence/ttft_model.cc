#include "balance/evidence/ttft_model.h"

#include <algorithm>
#include <cmath>

namespace rolter {

TtftModel::TtftModel() {
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) p_[i][j] = i == j ? kInitialCovariance : 0;
  }
}

void TtftModel::record(double queue_depth, double uncached_ktokens, double ttft_ms) {
  if (!std::isfinite(queue_depth) || !std::isfinite(uncached_ktokens) || !std::isfinite(ttft_ms)) {
    return;
  }
  const double x[3] = {1.0, queue_depth, uncached_ktokens};
  std::lock_guard lock(update_mu_);
  double w[3];
  double px[3];
  double predicted = 0;
  double xpx = 0;
  for (int i = 0; i < 3; ++i) {
    w[i] = w_[i].load(std::memory_order_relaxed);
    predicted += w[i] * x[i];
    px[i] = p_[i][0] * x[0] + p_[i][1] * x[1] + p_[i][2] * x[2];
  }
  for (int i = 0; i < 3; ++i) xpx += x[i] * px[i];
  const double denominator = kForget + xpx;
  if (!std::isfinite(denominator) || denominator <= 0) return;
  const double error = ttft_ms - predicted;
  double gain[3];
  for (int i = 0; i < 3; ++i) gain[i] = px[i] / denominator;
  for (int i = 0; i < 3; ++i) {
    w_[i].store(std::clamp(w[i] + gain[i] * error, -kClampMs, kClampMs),
                std::memory_order_relaxed);
  }
  // P = (P - g (P x)^T) / λ, kept symmetric; P is symmetric, so x^T P = (P x)^T.
  double trace = 0;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) p_[i][j] = (p_[i][j] - gain[i] * px[j]) / kForget;
    trace += p_[i][i];
  }
  for (int i = 0; i < 3; ++i) {
    for (int j = i + 1; j < 3; ++j) p_[i][j] = p_[j][i] = (p_[i][j] + p_[j][i]) / 2;
  }
  if (!std::isfinite(trace) || trace > kMaxTrace) {
    const double scale = std::isfinite(trace) ? kMaxTrace / trace : 0;
    for (auto& row : p_) {
      for (double& v : row) v = std::isfinite(trace) ? v * scale : 0;
    }
    if (!std::isfinite(trace)) {
      for (int i = 0; i < 3; ++i) p_[i][i] = kInitialCovariance;
    }
  }
  samples_.fetch_add(1, std::memory_order_relaxed);
}

std::optional<double> TtftModel::predict(double queue_depth, double uncached_ktokens) const {
  if (samples_.load(std::memory_order_relaxed) < kMinSamples) return std::nullopt;
  const double c = w_[0].load(std::memory_order_relaxed);
  const double b = std::max(0.0, w_[1].load(std::memory_order_relaxed));
  const double a = std::max(0.0, w_[2].load(std::memory_order_relaxed));
  const double value = c + b * queue_depth + a * uncached_ktokens;
  if (!std::isfinite(value)) return std::nullopt;
  return std::max(0.0, value);
}

std::array<double, 3> TtftModel::coefficients() const {
  return {w_[0].load(std::memory_order_relaxed), w_[1].load(std::memory_order_relaxed),
          w_[2].load(std::memory_order_relaxed)};
}

}  // namespace rolter
