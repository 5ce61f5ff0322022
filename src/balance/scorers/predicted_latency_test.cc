#include "balance/scorers/predicted_latency.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "balance/evidence/instance_evidence.h"
#include "balance/testing/candidates_fixture.h"
#include "balance/testing/loads_fixture.h"
#include "common/random.h"

namespace rolter {
namespace {

using LatencyModel = std::function<double(double queue_depth, double prompt_ktokens)>;

// Feeds `samples` successful requests (queue 0..20, prompt 0..8 ktokens) that follow `model`.
void train(InstanceEvidence& evidence, int samples, const LatencyModel& model, uint64_t seed = 1) {
  SeededRandom random(seed);
  for (int i = 0; i < samples; ++i) {
    const double q = static_cast<double>(random.uniform(21));
    const double k = static_cast<double>(random.uniform(9));
    evidence.record_success(q, k, model(q, k));
  }
}

// n candidates; candidate i's evidence is evidence[i] (none where with_evidence is false).
struct Fleet {
  explicit Fleet(size_t n, std::vector<bool> with_evidence = {})
      : evidence(std::make_unique<InstanceEvidence[]>(n)), candidates(make_candidates(n)) {
    for (size_t i = 0; i < n; ++i) {
      if (with_evidence.empty() || with_evidence[i]) candidates[i].evidence = &evidence[i];
    }
  }
  std::unique_ptr<InstanceEvidence[]> evidence;
  std::vector<CandidateSpec> candidates;
};

std::vector<double> run(
    const Fleet& fleet, const std::vector<uint32_t>& load_values, const RouteContext& ctx = {},
    Eligible eligible = [](size_t) { return true; }) {
  PredictedLatencyScorer scorer(fleet.candidates);
  LoadsFixture loads(load_values);
  std::vector<double> out(load_values.size(), -1);
  scorer.score(ctx, loads.view(), eligible, out);
  return out;
}

const LatencyModel kFast = [](double q, double k) { return 40 + 25 * q + 300 * k; };
const LatencyModel kSlow = [](double q, double k) { return 400 + 50 * q + 600 * k; };

TEST(PredictedLatencyScorerTest, PromptKtokens) {
  const std::vector<uint32_t> tokens(2500, 7);
  struct Case {
    const char* name;
    bool with_tokens;
    size_t prompt_len;
    double expected;
  };
  const Case cases[] = {
      {"token ids counted", true, 0, 2.5},
      {"token ids win over bytes", true, 40000, 2.5},
      {"bytes / 4 / 1000 without ids", false, 8000, 2.0},
      {"empty prompt", false, 0, 0.0},
  };
  for (const Case& c : cases) {
    RouteContext ctx;
    ctx.prompt_len = c.prompt_len;
    if (c.with_tokens) ctx.token_ids = std::span<const uint32_t>(tokens);
    EXPECT_DOUBLE_EQ(ctx.prompt_ktokens(), c.expected) << c.name;
  }
}

TEST(PredictedLatencyScorerTest, NeutralBelowEightSamples) {
  Fleet fleet(3);
  for (size_t i = 0; i < 3; ++i) train(fleet.evidence[i], 7, i == 0 ? kFast : kSlow);
  EXPECT_EQ(run(fleet, {0, 5, 9}), std::vector<double>({0, 0, 0}));
  // One warm model has nothing to be compared with: still neutral.
  train(fleet.evidence[1], 1, kSlow);
  EXPECT_EQ(run(fleet, {0, 5, 9}), std::vector<double>({0, 0, 0}));
}

TEST(PredictedLatencyScorerTest, LowerPredictionIsBetterUnknownGetsTheMean) {
  // 0 fast, 1 slow, 2 still cold (7 samples), 3 without evidence.
  Fleet fleet(4, {true, true, true, false});
  train(fleet.evidence[0], 3000, kFast);
  train(fleet.evidence[1], 3000, kSlow);
  train(fleet.evidence[2], 7, kFast);
  EXPECT_EQ(run(fleet, {2, 2, 2, 2}), std::vector<double>({1, 0, 0.5, 0.5}));
}

TEST(PredictedLatencyScorerTest, ReadsEachCandidatesCurrentLoad) {
  // Two identical models: the one with the shorter queue predicts less.
  Fleet fleet(2);
  train(fleet.evidence[0], 3000, kFast);
  train(fleet.evidence[1], 3000, kFast);
  EXPECT_EQ(run(fleet, {0, 10}), std::vector<double>({1, 0}));
  EXPECT_EQ(run(fleet, {10, 0}), std::vector<double>({0, 1}));
}

TEST(PredictedLatencyScorerTest, ReadsThePromptSize) {
  // 0 is quick to start but slow per token; 1 costs 300 ms whatever the prompt.
  Fleet fleet(2);
  train(fleet.evidence[0], 3000, [](double, double k) { return 100 + 500 * k; });
  train(fleet.evidence[1], 3000, [](double, double) { return 300.0; });
  RouteContext short_prompt;
  short_prompt.prompt_len = 400;  // 0.1 ktokens: ~150 ms vs 300 ms
  RouteContext long_prompt;
  long_prompt.prompt_len = 8000;  // 2 ktokens: ~1100 ms vs 300 ms
  EXPECT_EQ(run(fleet, {0, 0}, short_prompt), std::vector<double>({1, 0}));
  EXPECT_EQ(run(fleet, {0, 0}, long_prompt), std::vector<double>({0, 1}));
}

TEST(PredictedLatencyScorerTest, NormalisesOverEligibleOnly) {
  // The fast candidate 0 is ineligible; among the rest, 1 (load 0) beats 2 (load 10).
  Fleet fleet(3);
  for (size_t i = 0; i < 3; ++i) train(fleet.evidence[i], 3000, i == 0 ? kFast : kSlow);
  const auto out = run(fleet, {0, 0, 10}, {}, [](size_t i) { return i != 0; });
  EXPECT_EQ(out[1], 1.0);
  EXPECT_EQ(out[2], 0.0);
}

}  // namespace
}  // namespace rolter
