// Step 1 of a disaggregated request (proxy/prefill_call.h) against a real simulated engine in this
// process: the parameters of a prefill engine's answer come back as the engine sent them, and
// each way the call can fail is reported as the attempt loop reads it (refused, timed out, an
// error status, an answer without parameters).
#include "proxy/prefill_call.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>

#include "config/loader.h"
#include "proxy/kv_transfer.h"
#include "proxy/testing/sim_engine.h"
#include "upstream/upstream_connection.h"

namespace rolter {
namespace {

using Json = nlohmann::json;
using std::chrono::milliseconds;

constexpr std::string_view kChat =
    R"({"model":"chat","messages":[{"role":"user","content":"one two three four five six"}],)"
    R"("stream":true,"max_tokens":50})";

// A simulated engine of `role`, with `faults`.
sim::EngineOptions engine_options(sim::EngineRole role, sim::Faults faults = {}) {
  sim::EngineOptions options;
  options.role = role;
  options.faults = faults;
  options.engine_id = "sim-test-0";
  options.model.block_size = 2;
  return options;
}

// A snapshot whose route "m" has one candidate at `url`.
class Target {
 public:
  explicit Target(const std::string& url) {
    auto loaded = load_config_text(
        "[[providers]]\nname = \"p\"\nbase_url = \"" + url +
            "\"\n[[routes]]\nname = \"m\"\ntargets = [{ provider = \"p\", model = \"sim-model\" }]\n",
        "test.toml");
    EXPECT_TRUE(loaded.has_value());
    auto built = build_snapshot(std::move(loaded->config), tracker_, BalancerDeps{}, 1);
    EXPECT_TRUE(built.has_value());
    snapshot_ = std::move(*built);
  }
  const Candidate& candidate() const { return snapshot_->resolve("m")->pool->candidates[0]; }

 private:
  LoadTracker tracker_;
  std::shared_ptr<const Snapshot> snapshot_;
};

PrefillCall call(SimEngine& engine, const Target& target, std::string body,
                 milliseconds timeout = milliseconds(5000)) {
  asio::ssl::context tls = make_client_tls_context();
  return engine.run<PrefillCall>([&]() -> Task<PrefillCall> {
    PrefillCallParams params{.candidate = &target.candidate(),
                             .target = "/v1/chat/completions",
                             .body = std::move(body),
                             .request_id = "req-1",
                             .timeout = timeout};
    co_return co_await call_prefill(std::move(params), tls);
  });
}

std::string step_one() { return *prefill_request_body(kChat, "sim-model"); }

TEST(PrefillCallTest, APrefillEnginesParametersComeBackAsSent) {
  SimEngine engine(engine_options(sim::EngineRole::kPrefill));
  Target target(engine.url());
  const PrefillCall got = call(engine, target, step_one());
  ASSERT_TRUE(got.ok()) << got.error;
  EXPECT_EQ(got.status, 200u);
  const Json params = Json::parse(got.params);
  EXPECT_EQ(params["do_remote_prefill"], true);
  EXPECT_EQ(params["remote_engine_id"], "sim-test-0");
  EXPECT_EQ(params["remote_port"], engine.port());
  EXPECT_EQ(params["remote_block_ids"].size(), 3u);  // six words, blocks of two
  // The engine served one unstreamed token and holds the blocks for a decode engine.
  const Json stats = engine.stats();
  EXPECT_EQ(stats["remote_decode_prefills"], 1);
  EXPECT_EQ(stats["kv_holds"], 1);
}

TEST(PrefillCallTest, AnAnswerWithoutParametersFails) {
  SimEngine engine(engine_options(sim::EngineRole::kBoth));
  Target target(engine.url());
  // A body that does not ask for a remote decode: an ordinary answer comes back.
  const PrefillCall got = call(
      engine, target,
      R"({"model":"sim-model","messages":[{"role":"user","content":"hi"}],"max_tokens":1})");
  EXPECT_FALSE(got.ok());
  EXPECT_EQ(got.status, 200u);
  EXPECT_TRUE(got.params.empty());
  EXPECT_NE(got.error.find("no kv_transfer_params"), std::string::npos) << got.error;
}

TEST(PrefillCallTest, AnErrorStatusFailsWithIt) {
  SimEngine engine(
      engine_options(sim::EngineRole::kPrefill, sim::Faults{.error_rate = 1, .error_status = 503}));
  Target target(engine.url());
  const PrefillCall got = call(engine, target, step_one());
  EXPECT_FALSE(got.ok());
  EXPECT_EQ(got.status, 503u);
  EXPECT_FALSE(got.refused);
  EXPECT_FALSE(got.timed_out);
  // A decode engine refuses step 1 itself: the request, not the engine, is at fault there.
  SimEngine decode(engine_options(sim::EngineRole::kDecode));
  Target decode_target(decode.url());
  EXPECT_EQ(call(decode, decode_target, step_one()).status, 400u);
}

TEST(PrefillCallTest, AClosedPortIsRefused) {
  SimEngine engine(engine_options(sim::EngineRole::kPrefill, sim::Faults{.refuse = true}));
  Target target(engine.url());
  const PrefillCall got = call(engine, target, step_one());
  EXPECT_FALSE(got.ok());
  EXPECT_TRUE(got.refused) << got.error;
  EXPECT_EQ(got.status, 0u);
}

TEST(PrefillCallTest, AStalledEngineTimesOut) {
  SimEngine engine(
      engine_options(sim::EngineRole::kPrefill, sim::Faults{.stall_first_byte_ms = 3000}));
  Target target(engine.url());
  const PrefillCall got = call(engine, target, step_one(), milliseconds(100));
  EXPECT_FALSE(got.ok());
  EXPECT_TRUE(got.timed_out) << got.error;
  EXPECT_EQ(got.status, 0u);
}

}  // namespace
}  // namespace rolter
