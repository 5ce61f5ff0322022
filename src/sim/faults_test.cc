#include "sim/faults.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace rolter::sim {
namespace {

using Json = nlohmann::json;

TEST(FaultsTest, NoFaultsServeNormally) {
  Faults f;
  for (uint64_t seq = 0; seq < 100; ++seq) {
    FaultDecision d = decide_faults(f, 1, 0, seq);
    EXPECT_EQ(d.action, FaultAction::kNone);
    EXPECT_EQ(d.stall.count(), 0);
    EXPECT_FALSE(d.drop_after_tokens.has_value());
  }
}

TEST(FaultsTest, ErrorRateOneFailsEveryRequestWithTheStatus) {
  Faults f;
  f.error_rate = 1.0;
  f.error_status = 503;
  for (uint64_t seq = 0; seq < 100; ++seq) {
    FaultDecision d = decide_faults(f, 7, 2, seq);
    EXPECT_EQ(d.action, FaultAction::kError);
    EXPECT_EQ(d.status, 503);
  }
}

TEST(FaultsTest, ErrorRateIsAFractionAndDeterministic) {
  Faults f;
  f.error_rate = 0.25;
  int errors = 0;
  for (uint64_t seq = 0; seq < 10000; ++seq) {
    const FaultDecision a = decide_faults(f, 42, 1, seq);
    const FaultDecision b = decide_faults(f, 42, 1, seq);
    EXPECT_EQ(a.action, b.action) << "request " << seq;
    errors += a.action == FaultAction::kError;
  }
  EXPECT_NEAR(errors / 10000.0, 0.25, 0.02);
}

TEST(FaultsTest, SeedAndEngineChangeWhichRequestsFail) {
  Faults f;
  f.error_rate = 0.5;
  int differ_by_seed = 0;
  int differ_by_engine = 0;
  for (uint64_t seq = 0; seq < 200; ++seq) {
    const auto base = decide_faults(f, 1, 0, seq).action;
    differ_by_seed += base != decide_faults(f, 2, 0, seq).action;
    differ_by_engine += base != decide_faults(f, 1, 1, seq).action;
  }
  EXPECT_GT(differ_by_seed, 50);
  EXPECT_GT(differ_by_engine, 50);
}

TEST(FaultsTest, RateLimitWinsOverErrorsAndCarriesRetryAfter) {
  Faults f;
  f.error_rate = 1.0;
  f.status_429_retry_after_s = 7;
  f.stall_first_byte_ms = 30;
  FaultDecision d = decide_faults(f, 0, 0, 0);
  EXPECT_EQ(d.action, FaultAction::kRateLimit);
  EXPECT_EQ(d.status, 429);
  EXPECT_EQ(d.retry_after_s, 7);
  EXPECT_EQ(d.stall.count(), 30);
}

TEST(FaultsTest, DropIsPassedToTheStream) {
  Faults f;
  f.drop_mid_stream_after_tokens = 3;
  f.drop_with_reset = true;
  FaultDecision d = decide_faults(f, 0, 0, 0);
  EXPECT_EQ(d.action, FaultAction::kNone);
  ASSERT_TRUE(d.drop_after_tokens.has_value());
  EXPECT_EQ(*d.drop_after_tokens, 3);
  EXPECT_TRUE(d.drop_with_reset);
}

TEST(FaultsTest, JsonRoundTrip) {
  Faults f;
  f.refuse = true;
  f.error_rate = 0.5;
  f.error_status = 502;
  f.status_429_retry_after_s = 3;
  f.stall_first_byte_ms = 100;
  f.tokenize_stall_ms = 250;
  f.decision_stall_ms = 4000;
  f.decision_status = 503;
  f.decision_garbage = true;
  f.drop_mid_stream_after_tokens = 4;
  f.slowdown = 5;
  f.max_model_len = 50;
  auto back = faults_from_json(faults_to_json(f));
  ASSERT_TRUE(back.has_value()) << back.error();
  EXPECT_EQ(*back, f);
  EXPECT_TRUE(faults_to_json(Faults{})["status_429_retry_after_s"].is_null());
}

TEST(FaultsTest, JsonAbsentFieldsTakeDefaultsAndNullClears) {
  auto f = faults_from_json(Json{{"error_rate", 1}, {"status_429_retry_after_s", nullptr}});
  ASSERT_TRUE(f.has_value()) << f.error();
  EXPECT_EQ(f->error_rate, 1.0);
  EXPECT_EQ(f->error_status, 500);
  EXPECT_FALSE(f->refuse);
  EXPECT_FALSE(f->status_429_retry_after_s.has_value());
}

TEST(FaultsTest, JsonRejectsBadFields) {
  EXPECT_FALSE(faults_from_json(Json{{"error_rate", 1.5}}).has_value());
  EXPECT_FALSE(faults_from_json(Json{{"error_status", 200}}).has_value());
  EXPECT_FALSE(faults_from_json(Json{{"refuse", "yes"}}).has_value());
  EXPECT_FALSE(faults_from_json(Json{{"refuze", true}}).has_value());
  EXPECT_FALSE(faults_from_json(Json{{"drop_mid_stream_after_tokens", -1}}).has_value());
  EXPECT_FALSE(faults_from_json(Json{{"tokenize_stall_ms", -1}}).has_value());
  EXPECT_FALSE(faults_from_json(Json{{"tokenize_stall_ms", "10"}}).has_value());
  EXPECT_FALSE(faults_from_json(Json{{"decision_stall_ms", -1}}).has_value());
  EXPECT_FALSE(faults_from_json(Json{{"decision_status", 42}}).has_value());
  EXPECT_FALSE(faults_from_json(Json{{"decision_garbage", 1}}).has_value());
  EXPECT_FALSE(faults_from_json(Json::array()).has_value());
  EXPECT_FALSE(faults_from_json(Json{{"slowdown", 0.5}}).has_value());
  EXPECT_FALSE(faults_from_json(Json{{"slowdown", "5"}}).has_value());
  EXPECT_FALSE(faults_from_json(Json{{"max_model_len", -1}}).has_value());
  EXPECT_FALSE(faults_from_json(Json{{"max_model_len", "50"}}).has_value());
}

TEST(FaultsTest, SlowdownFromFlagReachesTheDecision) {
  Faults f;
  ASSERT_TRUE(apply_fault_settings("slowdown=5", f).has_value());
  EXPECT_EQ(f.slowdown, 5.0);
  EXPECT_EQ(decide_faults(f, 0, 0, 0).slowdown, 5.0);
  EXPECT_EQ(decide_faults(Faults{}, 0, 0, 0).slowdown, 1.0);
  EXPECT_FALSE(apply_fault_settings("slowdown=0", f).has_value());
  EXPECT_FALSE(apply_fault_settings("slowdown=fast", f).has_value());
}

TEST(FaultsTest, FlagWithEngine) {
  auto flag = parse_fault_flag("engine=1,refuse");
  ASSERT_TRUE(flag.has_value()) << flag.error();
  ASSERT_TRUE(flag->engine.has_value());
  EXPECT_EQ(*flag->engine, 1u);
  Faults f;
  ASSERT_TRUE(apply_fault_settings(flag->settings, f).has_value());
  EXPECT_TRUE(f.refuse);
}

TEST(FaultsTest, FlagWithoutEngineTargetsAll) {
  auto flag = parse_fault_flag("error_rate=0.5, error_status=503");
  ASSERT_TRUE(flag.has_value()) << flag.error();
  EXPECT_FALSE(flag->engine.has_value());
  Faults f;
  ASSERT_TRUE(apply_fault_settings(flag->settings, f).has_value());
  EXPECT_EQ(f.error_rate, 0.5);
  EXPECT_EQ(f.error_status, 503);
  EXPECT_FALSE(parse_fault_flag("engine=all,refuse")->engine.has_value());
}

TEST(FaultsTest, SettingsAliases) {
  Faults f;
  ASSERT_TRUE(apply_fault_settings("429=2,stall=150,drop=4,reset", f).has_value());
  EXPECT_EQ(f.status_429_retry_after_s, 2);
  EXPECT_EQ(f.stall_first_byte_ms, 150);
  EXPECT_EQ(f.drop_mid_stream_after_tokens, 4);
  EXPECT_TRUE(f.drop_with_reset);
  EXPECT_EQ(f.tokenize_stall_ms, 0) << "stall= is the inference APIs' stall only";
  ASSERT_TRUE(apply_fault_settings("tokenize_stall=10000", f).has_value());
  EXPECT_EQ(f.tokenize_stall_ms, 10000);
  EXPECT_EQ(f.stall_first_byte_ms, 150);
  ASSERT_TRUE(apply_fault_settings("tokenize_stall_ms=5", f).has_value());
  EXPECT_EQ(f.tokenize_stall_ms, 5);
  ASSERT_TRUE(apply_fault_settings("decision_stall=4000,decision_status=500,decision_garbage", f)
                  .has_value());
  EXPECT_EQ(f.decision_stall_ms, 4000);
  EXPECT_EQ(f.decision_status, 500);
  EXPECT_TRUE(f.decision_garbage);
  EXPECT_EQ(f.tokenize_stall_ms, 5);
  ASSERT_TRUE(apply_fault_settings("max_model_len=64", f).has_value());
  EXPECT_EQ(f.max_model_len, 64);
  EXPECT_FALSE(apply_fault_settings("max_model_len=-1", f).has_value());
  f.max_model_len = 64;
  ASSERT_TRUE(apply_fault_settings("429=off,drop=null,refuse=false", f).has_value());
  EXPECT_FALSE(f.status_429_retry_after_s.has_value());
  EXPECT_FALSE(f.drop_mid_stream_after_tokens.has_value());
}

TEST(FaultsTest, BadFlagsAreReported) {
  EXPECT_FALSE(parse_fault_flag("engine=x,refuse").has_value());
  EXPECT_FALSE(parse_fault_flag("engine=0,explode").has_value());
  EXPECT_FALSE(parse_fault_flag("error_rate=abc").has_value());
  EXPECT_FALSE(parse_fault_flag("error_rate=2").has_value());
  auto err = parse_fault_flag("engine=0,stall=-1");
  ASSERT_FALSE(err.has_value());
  EXPECT_NE(err.error().find("stall=-1"), std::string::npos);
}

}  // namespace
}  // namespace rolter::sim
