#include "balance/evidence/ttft_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "common/random.h"

namespace rolter {
namespace {

double truth(double q, double p, double k) { return 20 + 30 * q + 100 * p + 200 * k; }

// Prompts from 0 to 100 thousand tokens, queued prefill up to 50 thousand and queues of 0 to 7:
// feature scales three orders of magnitude apart.
void teach(TtftModel& model, int samples, uint64_t seed) {
  SeededRandom random(seed);
  for (int s = 0; s < samples; ++s) {
    const double q = static_cast<double>(random.uniform(8));
    const double p = static_cast<double>(random.uniform(50'001)) / 1000;
    const double k = static_cast<double>(random.uniform(100'001)) / 1000;
    model.record(q, p, k, truth(q, p, k));
  }
}

TEST(TtftModelTest, UnknownBelowEightSamples) {
  TtftModel model;
  teach(model, 7, 1);
  EXPECT_FALSE(model.predict(0, 0, 1).has_value());
  teach(model, 1, 2);
  EXPECT_TRUE(model.predict(0, 0, 1).has_value());
}

TEST(TtftModelTest, ConvergesOnLinearDataWithinFiftySamples) {
  for (uint64_t seed : {1, 2, 3, 4}) {
    TtftModel model;
    teach(model, 50, seed);
    const auto w = model.coefficients();
    EXPECT_NEAR(w[0], 20, 0.5) << seed;
    EXPECT_NEAR(w[1], 30, 0.5) << seed;
    EXPECT_NEAR(w[2], 100, 0.5) << seed;
    EXPECT_NEAR(w[3], 200, 0.5) << seed;
    EXPECT_NEAR(*model.predict(0, 0, 0), 20, 0.5) << seed;
  }
}

TEST(TtftModelTest, FollowsAnEngineThatChanges) {
  TtftModel model;
  teach(model, 500, 5);
  // The engine becomes twice as slow per token.
  SeededRandom random(6);
  for (int s = 0; s < 20'000; ++s) {
    const double q = static_cast<double>(random.uniform(8));
    const double p = static_cast<double>(random.uniform(50'001)) / 1000;
    const double k = static_cast<double>(random.uniform(100'001)) / 1000;
    model.record(q, p, k, 20 + 30 * q + 100 * p + 400 * k);
  }
  EXPECT_NEAR(model.coefficients()[3], 400, 1);
}

TEST(TtftModelTest, CostsAreNeverReadBelowZero) {
  TtftModel model;
  // Latency that falls with the queue and the prompt: noise a real engine can produce briefly.
  for (int s = 0; s < 100; ++s) {
    model.record(s % 5, s % 3, (s % 7) * 0.5, 500 - 10 * (s % 5) - 5 * (s % 3) - 20 * (s % 7));
  }
  const auto w = model.coefficients();
  ASSERT_LT(w[1], 0);
  ASSERT_LT(w[2], 0);
  ASSERT_LT(w[3], 0);
  EXPECT_DOUBLE_EQ(*model.predict(10, 10, 10), *model.predict(0, 0, 0));
}

TEST(TtftModelTest, OutliersStayWithinTheClampAndNonFiniteSamplesAreIgnored) {
  TtftModel model;
  teach(model, 50, 7);
  model.record(1, 1, 1, 1e12);
  for (double w : model.coefficients()) {
    EXPECT_LE(std::abs(w), TtftModel::kClampMs);
  }
  const uint64_t before = model.samples();
  model.record(std::numeric_limits<double>::quiet_NaN(), 1, 1, 100);
  model.record(1, std::numeric_limits<double>::infinity(), 1, 100);
  model.record(1, 1, std::numeric_limits<double>::infinity(), 100);
  model.record(1, 1, 1, std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(model.samples(), before);
  EXPECT_TRUE(std::isfinite(*model.predict(1, 1, 1)));
}

TEST(TtftModelTest, AQueueThatNeverFormsKeepsTheModelFinite) {
  // Queue and queued prefill always 0 under forgetting: the covariance along them would grow
  // without bound.
  TtftModel model;
  for (int s = 0; s < 200'000; ++s) model.record(0, 0, (s % 11) * 0.3, 20 + 200 * (s % 11) * 0.3);
  for (double w : model.coefficients()) EXPECT_TRUE(std::isfinite(w));
  EXPECT_NEAR(*model.predict(0, 0, 1), 220, 1);
}

}  // namespace
}  // namespace rolter
