#include "balance/evidence/latency_predictor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <thread>
#include <vector>

#include "common/random.h"

namespace rolter {
namespace {

// The synthetic instance every convergence test learns: 40 ms base, 25 ms per queued request,
// 300 ms per thousand prompt tokens.
double synthetic_latency(double queue_depth, double prompt_ktokens) {
  return 40 + 25 * queue_depth + 300 * prompt_ktokens;
}

// Feeds `samples` requests with queue depth 0..20 and prompt 0..8 ktokens drawn from `random`.
void learn_synthetic(LatencyPredictor& predictor, int samples, Random& random) {
  for (int i = 0; i < samples; ++i) {
    const double q = static_cast<double>(random.uniform(21));
    const double k = static_cast<double>(random.uniform(9));
    predictor.record(q, k, synthetic_latency(q, k));
  }
}

double relative_error(const LatencyPredictor& predictor, double q, double k) {
  const auto predicted = predictor.predict(q, k);
  if (!predicted) return std::numeric_limits<double>::infinity();
  return std::abs(*predicted - synthetic_latency(q, k)) / synthetic_latency(q, k);
}

TEST(LatencyPredictorTest, PredictsNothingBelowEightSamples) {
  LatencyPredictor predictor;
  for (uint64_t i = 0; i < LatencyPredictor::kMinSamples; ++i) {
    EXPECT_EQ(predictor.predict(1, 1), std::nullopt) << "after " << i << " samples";
    EXPECT_EQ(predictor.predict(0, 0), std::nullopt) << "after " << i << " samples";
    predictor.record(1, 1, 100);
  }
  EXPECT_EQ(predictor.samples(), 8u);
  EXPECT_TRUE(predictor.predict(1, 1).has_value());
}

TEST(LatencyPredictorTest, IgnoresNonFiniteInputs) {
  {
    LatencyPredictor predictor;
    for (int i = 0; i < 20; ++i) {
      predictor.record(1, 1, 100, std::numeric_limits<double>::quiet_NaN());
    }
    EXPECT_EQ(predictor.samples(), 0u) << "a non-finite queued prefill";
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  LatencyPredictor predictor;
  for (int i = 0; i < 10; ++i) {
    predictor.record(nan, 1, 100);
    predictor.record(1, inf, 100);
    predictor.record(1, 1, nan);
  }
  EXPECT_EQ(predictor.samples(), 0u);
  EXPECT_EQ(predictor.predict(1, 1), std::nullopt);
}

TEST(LatencyPredictorTest, ConvergesWithinFivePercentAfter500Samples) {
  SeededRandom random(7);
  LatencyPredictor predictor;
  learn_synthetic(predictor, 500, random);
  // Points across the range the model was fed. The idle-and-empty corner (0, 0) is left to the
  // next test: there the prediction is the intercept alone, the model's slowest direction.
  const double points[][2] = {{5, 2}, {10, 4}, {20, 8}, {2, 6}, {15, 1}, {0, 4}, {10, 0}};
  for (const auto& p : points) {
    EXPECT_LT(relative_error(predictor, p[0], p[1]), 0.05) << "q=" << p[0] << " k=" << p[1];
  }
}

// Requests that waited behind queued prefill: 60 ms per thousand tokens of it. The model learns
// that cost, and a sample recorded without a queued prefill (0) leaves it where it was.
TEST(LatencyPredictorTest, LearnsTheCostOfThePrefillQueuedAhead) {
  LatencyPredictor predictor;
  SeededRandom random(5);
  for (int i = 0; i < 2000; ++i) {
    const double q = static_cast<double>(random.uniform(4));
    const double queued = static_cast<double>(random.uniform(50));
    predictor.record(q, 1, synthetic_latency(q, 1) + 60 * queued, queued);
  }
  const auto clear = predictor.predict(1, 1, 0);
  const auto behind = predictor.predict(1, 1, 40);
  ASSERT_TRUE(clear && behind);
  EXPECT_NEAR(*behind - *clear, 60 * 40, 0.1 * 60 * 40);
  EXPECT_EQ(predictor.predict(1, 1), predictor.predict(1, 1, 0)) << "no queued prefill given";
}

TEST(LatencyPredictorTest, InterceptConvergesMoreSlowly) {
  // NLMS divides each step by |x|^2 = 1 + q^2 + k^2. For q in 0..20 and k in 0..8 the smallest
  // eigenvalue of E[x x^T / |x|^2] is about 0.015, mostly along the intercept, so that direction
  // decays with a time constant of about 1 / (0.15 * 0.015) ~ 440 samples: after 500 samples the
  // prediction at (0, 0) is still off by roughly e^-1 of its initial error (6-17% of 40 ms for
  // seeds 1, 2, 3 and 7), while every point with a real queue or prompt is within 1.5%. By 3000
  // samples it has settled too (under 0.1%).
  SeededRandom random(7);
  LatencyPredictor predictor;
  learn_synthetic(predictor, 3000, random);
  EXPECT_LT(relative_error(predictor, 0, 0), 0.05);
  EXPECT_LT(relative_error(predictor, 1, 0), 0.05);
  EXPECT_LT(relative_error(predictor, 0, 1), 0.05);
}

TEST(LatencyPredictorTest, OneHugeSampleStaysInsideTheClamp) {
  SeededRandom random(8);
  LatencyPredictor predictor;
  learn_synthetic(predictor, 200, random);
  // A stalled request: 10^9 ms. The step along x = (1, 10, 2) pushes every coefficient far past
  // 600,000 ms, so each one must sit exactly at the clamp and no further.
  predictor.record(10, 2, 1e9);
  const double clamp = LatencyPredictor::kClampMs;
  EXPECT_DOUBLE_EQ(*predictor.predict(0, 0), clamp);        // w0
  EXPECT_DOUBLE_EQ(*predictor.predict(1, 0), 2 * clamp);    // w0 + w1
  EXPECT_DOUBLE_EQ(*predictor.predict(0, 1), 2 * clamp);    // w0 + w2
  EXPECT_DOUBLE_EQ(*predictor.predict(20, 8), 29 * clamp);  // the largest the model can say

  // The model is not broken for good: ordinary samples pull it back.
  learn_synthetic(predictor, 5000, random);
  EXPECT_LT(relative_error(predictor, 10, 4), 0.05);
}

TEST(LatencyPredictorTest, NeverLearnsThatADeeperQueueOrLongerPromptIsFaster) {
  LatencyPredictor predictor;
  // Latency that falls with the queue and the prompt (requests that joined a deep queue found it
  // draining): least squares alone would learn negative w1 and w2 and rank the busiest candidate
  // best (SPEC §6.16).
  for (int i = 0; i < 2000; ++i) {
    const double q = i % 5;
    const double k = (i / 5) % 3;
    predictor.record(q, k, 200 - 20 * q - 30 * k);
  }
  const double idle = *predictor.predict(0, 0);
  EXPECT_GE(idle, 0.0);
  EXPECT_GE(*predictor.predict(50, 0), idle);
  EXPECT_GE(*predictor.predict(0, 50), idle);
  EXPECT_GE(*predictor.predict(50, 50), *predictor.predict(50, 0));
}

TEST(LatencyPredictorTest, NeverPredictsNegative) {
  LatencyPredictor predictor;
  // A falling latency drives the intercept down, not the queue coefficient; predictions stay >= 0.
  for (int i = 0; i < 2000; ++i) predictor.record(i % 5, 0, i % 2 == 0 ? 0 : 1);
  for (int q = 0; q < 60; q += 7) {
    ASSERT_TRUE(predictor.predict(q, 0).has_value());
    EXPECT_GE(*predictor.predict(q, 0), 0.0);
  }
}

TEST(LatencyPredictorTest, PredictWhileRecordingFromOtherThreads) {
  // predict() is lock-free and may read a model mid-update; it must still give a finite,
  // non-negative value and every record must count.
  constexpr int kThreads = 3;
  constexpr int kPerThread = 2000;
  LatencyPredictor predictor;
  SeededRandom warm(9);
  learn_synthetic(predictor, 8, warm);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&predictor, t] {
      SeededRandom random(100 + t);
      learn_synthetic(predictor, kPerThread, random);
    });
  }
  for (int i = 0; i < 20000; ++i) {
    const auto p = predictor.predict(static_cast<double>(i % 21), static_cast<double>(i % 9));
    ASSERT_TRUE(p.has_value());
    ASSERT_TRUE(std::isfinite(*p) && *p >= 0);
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(predictor.samples(), static_cast<uint64_t>(8 + kThreads * kPerThread));
}

}  // namespace
}  // namespace rolter
