#include "balance/evidence/ttft_model.h"

#include <algorithm>
#include <cmath>

namespace rolter {

namespace {
constexpr int kN = TtftModel::kFeatures;
}  // namespace

TtftModel::TtftModel() {
  for (int i = 0; i < kN; ++i) {
    for (int j = 0; j < kN; ++j) p_[i][j] = i == j ? kInitialCovariance : 0;
  }
}

void TtftModel::record(double queue_depth, double queued_prefill_ktokens, double uncached_ktokens,
                       double ttft_ms) {
  const double x[kN] = {1.0, queue_depth, queued_prefill_ktokens, uncached_ktokens};
  for (double v : x) {
    if (!std::isfinite(v)) return;
  }
  if (!std::isfinite(ttft_ms)) return;
  MutexLock lock(update_mu_);
  double w[kN];
  double px[kN];
  double predicted = 0;
  double xpx = 0;
  for (int i = 0; i < kN; ++i) {
    w[i] = w_[i].load(std::memory_order_relaxed);
    predicted += w[i] * x[i];
    px[i] = 0;
    for (int j = 0; j < kN; ++j) px[i] += p_[i][j] * x[j];
  }
  for (int i = 0; i < kN; ++i) xpx += x[i] * px[i];
  const double denominator = kForget + xpx;
  if (!std::isfinite(denominator) || denominator <= 0) return;
  const double error = ttft_ms - predicted;
  double gain[kN];
  for (int i = 0; i < kN; ++i) gain[i] = px[i] / denominator;
  for (int i = 0; i < kN; ++i) {
    w_[i].store(std::clamp(w[i] + gain[i] * error, -kClampMs, kClampMs),
                std::memory_order_relaxed);
  }
  // P = (P - g (P x)^T) / λ, kept symmetric; P is symmetric, so x^T P = (P x)^T.
  double trace = 0;
  for (int i = 0; i < kN; ++i) {
    for (int j = 0; j < kN; ++j) p_[i][j] = (p_[i][j] - gain[i] * px[j]) / kForget;
    trace += p_[i][i];
  }
  for (int i = 0; i < kN; ++i) {
    for (int j = i + 1; j < kN; ++j) p_[i][j] = p_[j][i] = (p_[i][j] + p_[j][i]) / 2;
  }
  if (!std::isfinite(trace)) {
    for (int i = 0; i < kN; ++i) {
      for (int j = 0; j < kN; ++j) p_[i][j] = i == j ? kInitialCovariance : 0;
    }
  } else if (trace > kMaxTrace) {
    const double scale = kMaxTrace / trace;
    for (auto& row : p_) {
      for (double& v : row) v *= scale;
    }
  }
  samples_.fetch_add(1, std::memory_order_relaxed);
}

double TtftModel::estimate(const std::array<double, kFeatures>& w, double queue_depth,
                           double queued_prefill_ktokens, double uncached_ktokens) {
  const double value = w[0] + std::max(0.0, w[1]) * queue_depth +
                       std::max(0.0, w[2]) * queued_prefill_ktokens +
                       std::max(0.0, w[3]) * uncached_ktokens;
  return std::isfinite(value) ? std::max(0.0, value) : 0.0;
}

std::optional<double> TtftModel::predict(double queue_depth, double queued_prefill_ktokens,
                                         double uncached_ktokens) const {
  if (samples_.load(std::memory_order_relaxed) < kMinSamples) return std::nullopt;
  return estimate(coefficients(), queue_depth, queued_prefill_ktokens, uncached_ktokens);
}

std::array<double, TtftModel::kFeatures> TtftModel::coefficients() const {
  std::array<double, kFeatures> w;
  for (int i = 0; i < kFeatures; ++i) w[i] = w_[i].load(std::memory_order_relaxed);
  return w;
}

}  // namespace rolter
