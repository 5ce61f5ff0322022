#include "proxy/engine_tokenizer.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "config/loader.h"
#include "proxy/testing/sim_engine.h"
#include "sim/engine_server.h"
#include "tokenizer/tokenizer.h"
#include "upstream/upstream_connection.h"

namespace rolter {
namespace {

using Json = nlohmann::json;
using std::chrono::milliseconds;
using Outcome = Metrics::TokenizeOutcome;


// ---------------------------------------------------------------------------------------------
// The pure parts.

TEST(TokenizeRequestBody, Table) {
  struct Case {
    const char* what;
    ApiKind kind;
    std::string_view body;
    std::optional<std::string_view> expected;  // for model "up/m"
  };
  const Case cases[] = {
      {"chat: messages copied byte for byte, escapes and spacing kept", ApiKind::kChatCompletions,
       R"({"model":"r","messages":[ {"role":"user","content":"h\u00e9 \"q\"\n"} ] ,"stream":true})",
       R"({"model":"up/m","messages":[ {"role":"user","content":"h\u00e9 \"q\"\n"} ]})"},
      {"chat: messages after other fields, nested parts", ApiKind::kChatCompletions,
       R"({"stream":false,"messages":[{"role":"user","content":[{"type":"text","text":"a"}]}]})",
       R"({"model":"up/m","messages":[{"role":"user","content":[{"type":"text","text":"a"}]}]})"},
      {"completions: a text prompt, whitespace around it", ApiKind::kCompletions,
       R"({"prompt" :  "a b\nc"  , "model":"x"})", R"({"model":"up/m","prompt":"a b\nc"})"},
      {"completions: a text prompt last", ApiKind::kCompletions, "{\"prompt\":\"p\" \n }",
       R"({"model":"up/m","prompt":"p"})"},
      {"completions: a token-id prompt", ApiKind::kCompletions, R"({"model":"x","prompt":[1, 2,3]})",
       R"({"model":"up/m","prompt":[1, 2,3]})"},
      {"chat without messages", ApiKind::kChatCompletions, R"({"model":"x"})", std::nullopt},
      {"chat messages not an array", ApiKind::kChatCompletions, R"({"messages":"hi"})",
       std::nullopt},
      {"chat with a prompt only", ApiKind::kChatCompletions, R"({"prompt":"hi"})", std::nullopt},
      {"completions prompt an object", ApiKind::kCompletions, R"({"prompt":{"a":1}})", std::nullopt},
      {"completions prompt a number", ApiKind::kCompletions, R"({"prompt":7})", std::nullopt},
      {"completions prompt a bad string", ApiKind::kCompletions, R"({"prompt":"a\q"})",
       std::nullopt},
      {"not JSON", ApiKind::kChatCompletions, "{nope", std::nullopt},
      {"a JSON array", ApiKind::kChatCompletions, R"([{"messages":[]}])", std::nullopt},
      {"empty", ApiKind::kCompletions, "", std::nullopt},
      {"embeddings are not tokenised", ApiKind::kEmbeddings, R"({"input":"x","prompt":"x"})",
       std::nullopt},
      {"responses are not tokenised", ApiKind::kResponses, R"({"messages":[]})", std::nullopt},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const auto body = tokenize_request_body(c.kind, c.body, "up/m");
    ASSERT_EQ(body.has_value(), c.expected.has_value()) << body.value_or("");
    if (!body) continue;
    EXPECT_EQ(*body, *c.expected);
    EXPECT_FALSE(Json::parse(*body, nullptr, false).is_discarded());
  }
  // The model is a JSON string, escaped.
  EXPECT_EQ(tokenize_request_body(ApiKind::kCompletions, R"({"prompt":"x"})", "a\"b"),
            R"({"model":"a\"b","prompt":"x"})");
}

TEST(ReadTokenizeReply, Table) {
  struct Case {
    const char* what;
    std::string_view body;
    std::optional<std::vector<uint32_t>> ids;
  };
  const Case cases[] = {
      {"vLLM's reply", R"({"count":3,"max_model_len":8192,"tokens":[1,20,4294967295]})",
       std::vector<uint32_t>{1, 20, 4294967295u}},
      {"tokens first, token_strs null", R"({"tokens":[],"count":0,"token_strs":null})",
       std::vector<uint32_t>{}},
      {"an id beyond 32 bits", R"({"tokens":[4294967296]})", std::nullopt},
      {"a negative id", R"({"tokens":[-1]})", std::nullopt},
      {"a fractional id", R"({"tokens":[1.5]})", std::nullopt},
      {"a string id", R"({"tokens":["1"]})", std::nullopt},
      {"tokens not an array", R"({"tokens":"1 2"})", std::nullopt},
      {"no tokens", R"({"count":2})", std::nullopt},
      {"truncated", R"({"tokens":[1,2)", std::nullopt},
      {"an error body", R"({"error":{"message":"x"}})", std::nullopt},
      {"not JSON", "<html>502</html>", std::nullopt},
      {"empty", "", std::nullopt},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const auto ids = read_tokenize_reply(c.body);
    ASSERT_EQ(ids.has_value(), c.ids.has_value()) << (ids ? "" : ids.error());
    if (ids) {
      EXPECT_EQ(*ids, *c.ids);
    }
  }
}

TEST(WantsEngineTokens, OnlyChatAndCompletionsWithoutIdsOnStrategiesThatReadThem) {
  RoutePool reads;
  reads.strategy = "kv_cost";
  RoutePool ignores;
  ignores.strategy = "round_robin";
  RouteContext plain;
  RouteContext with_ids;
  const std::vector<uint32_t> ids = {1, 2};
  with_ids.token_ids = std::span<const uint32_t>(ids);

  EXPECT_TRUE(wants_engine_tokens(ApiKind::kChatCompletions, plain, reads));
  EXPECT_TRUE(wants_engine_tokens(ApiKind::kCompletions, plain, reads));
  EXPECT_FALSE(wants_engine_tokens(ApiKind::kChatCompletions, with_ids, reads));
  EXPECT_FALSE(wants_engine_tokens(ApiKind::kChatCompletions, plain, ignores));
  EXPECT_FALSE(wants_engine_tokens(ApiKind::kEmbeddings, plain, reads));
  EXPECT_FALSE(wants_engine_tokens(ApiKind::kResponses, plain, reads));
  EXPECT_FALSE(wants_engine_tokens(ApiKind::kMessages, plain, reads));
  // A disaggregated route counts the prompt's tokens for its split decision, whatever its decode
  // strategy reads.
  RoutePool split;
  split.strategy = "least_kv_usage";
  split.prefill = std::make_unique<RoutePool>();
  EXPECT_TRUE(wants_engine_tokens(ApiKind::kChatCompletions, plain, split));
  EXPECT_FALSE(wants_engine_tokens(ApiKind::kChatCompletions, with_ids, split));
  EXPECT_FALSE(wants_engine_tokens(ApiKind::kEmbeddings, plain, split));
}

// ---------------------------------------------------------------------------------------------
// Against a snapshot, and a real simulated engine in this process.

// A snapshot from TOML text, with its LoadTracker and Metrics.
class Fleet {
 public:
  explicit Fleet(const std::string& toml) {
    auto loaded = load_config_text(toml, "test.toml");
    if (!loaded) {
      ADD_FAILURE() << "config: " << loaded.error().front().to_string();
      return;
    }
    auto built = build_snapshot(std::move(loaded->config), tracker_, BalancerDeps{}, 1, &metrics_);
    if (!built) {
      ADD_FAILURE() << "snapshot: " << built.error().front();
      return;
    }
    snapshot_ = std::move(*built);
  }

  const Snapshot& snapshot() const { return *snapshot_; }
  const RoutePool& pool(std::string_view model) const { return *snapshot_->resolve(model)->pool; }
  std::string metrics() { return metrics_.render(tracker_); }

 private:
  LoadTracker tracker_;
  Metrics metrics_;
  std::shared_ptr<const Snapshot> snapshot_;
};

// "tok" has tokenize = "engine" and two instances; "plain" has not.
std::string two_providers(std::string_view tok_a, std::string_view tok_b) {
  return R"(
[[providers]]
name = "plain"
base_url = "http://127.0.0.1:9"
[[providers]]
name = "tok"
tokenize = "engine"
[[providers.instances]]
base_url = ")" +
         std::string(tok_a) +
         R"("
[[providers.instances]]
base_url = ")" +
         std::string(tok_b) +
         R"("
[[routes]]
name = "r"
strategy = "round_robin"
[[routes.targets]]
provider = "plain"
model = "plain-model"
[[routes.targets]]
provider = "tok"
model = "tok-model"
)";
}

TEST(ChooseTokenizeCandidate, LeastLoadedOfTheEligibleTokenizingCandidates) {
  Fleet fleet(two_providers("http://127.0.0.1:1", "http://127.0.0.1:2"));
  const RoutePool& pool = fleet.pool("r");
  ASSERT_EQ(pool.candidates.size(), 3u);
  ASSERT_EQ(pool.candidates[0].provider->name, "plain");
  const auto now = default_clock().now();
  const BreakerParams& breaker = fleet.snapshot().breaker();
  InstanceState& a = *pool.candidates[1].state;
  InstanceState& b = *pool.candidates[2].state;

  EXPECT_EQ(choose_tokenize_candidate(pool, nullptr, now, breaker), 1u) << "a tie: the first";
  a.load.in_flight = 2;
  b.load.in_flight = 1;
  EXPECT_EQ(choose_tokenize_candidate(pool, nullptr, now, breaker), 2u) << "the least loaded";
  b.health.healthy = false;
  EXPECT_EQ(choose_tokenize_candidate(pool, nullptr, now, breaker), 1u) << "b is unhealthy";
  a.health.breaker = static_cast<uint8_t>(BreakerState::kOpen);
  a.health.opened_at = now.time_since_epoch().count();
  EXPECT_EQ(choose_tokenize_candidate(pool, nullptr, now, breaker), std::nullopt)
      << "never the plain provider, even when no tokenizing one may take traffic";
  a.health.breaker = static_cast<uint8_t>(BreakerState::kClosed);
  ApiKey key;
  key.providers = {"plain"};
  EXPECT_EQ(choose_tokenize_candidate(pool, &key, now, breaker), std::nullopt)
      << "never a provider the key may not use";
  key.providers = {"tok"};
  EXPECT_EQ(choose_tokenize_candidate(pool, &key, now, breaker), 1u);
}


// A port nothing listens on: bound, then closed.
uint16_t closed_port() {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
  const uint16_t port = acceptor.local_endpoint().port();
  acceptor.close();
  return port;
}

// The chat request a client would send, and the ids the engine caches for it.
constexpr std::string_view kChat =
    R"({"model":"r","messages":[{"role":"system","content":"you are terse"},)"
    R"({"role":"user","content":"say hi"}],"max_tokens":3})";

std::vector<uint32_t> chat_ids() {
  std::vector<uint32_t> ids;
  tokenizer::tokenize("you are terse\nsay hi", ids);
  return ids;
}

// The count of rolter_tokenize_seconds for `provider` and `outcome` in a /metrics text.
std::string tokenize_count(const std::string& metrics, std::string_view provider,
                           std::string_view outcome) {
  const std::string series = "rolter_tokenize_seconds_count{outcome=\"" + std::string(outcome) +
                             "\",provider=\"" + std::string(provider) + "\"} ";
  const size_t at = metrics.find(series);
  if (at == std::string::npos) return "absent";
  const size_t end = metrics.find('\n', at);
  return metrics.substr(at + series.size(), end - at - series.size());
}

TEST(EngineTokenIds, AsksOneEngineWithTheClientsMessagesAndUsesItsIds) {
  SimEngine engine;
  ASSERT_EQ(setenv("ROLTER_TOKENIZE_TEST_KEY", "sk-tok", 1), 0);
  std::string toml =
      two_providers(engine.url(), "http://127.0.0.1:" + std::to_string(closed_port()));
  toml.replace(toml.find("tokenize = \"engine\""), 19,
               "tokenize = \"engine\"\napi_key_env = \"ROLTER_TOKENIZE_TEST_KEY\"");
  Fleet fleet(toml);
  const RoutePool& built = fleet.pool("r");
  // The route of a strategy that reads token ids, with the snapshot's candidates and state.
  RoutePool pool;
  pool.name = "r";
  pool.strategy = "precise_cache_aware";
  pool.candidates = built.candidates;
  pool.counters = built.counters;
  pool.candidates[2].state->health.healthy = false;  // the closed port is never asked
  const ResolvedRoute route{.pool = &pool};
  const RouteContext ctx;
  asio::ssl::context tls = make_client_tls_context();
  const EngineTokenizeRequest request{
      .snapshot = &fleet.snapshot(),
      .route = &route,
      .ctx = &ctx,
      .kind = ApiKind::kChatCompletions,
      .body = kChat,
      .clock = &default_clock(),
      .tls = tls,
  };

  using Ids = std::optional<std::vector<uint32_t>>;
  const Ids ids =
      engine.run<Ids>([&]() -> Task<Ids> { co_return co_await engine_token_ids(request); });
  ASSERT_TRUE(ids.has_value());
  EXPECT_EQ(*ids, chat_ids());

  const Json stats = engine.stats();
  EXPECT_EQ(stats["tokenize"]["requests"], 1);
  EXPECT_EQ(stats["requests"], 0) << "no inference request";
  const Json& body = stats["tokenize"]["last_body"];
  EXPECT_EQ(body["model"], "tok-model") << "the candidate's upstream model";
  EXPECT_EQ(body["messages"], Json::parse(kChat)["messages"]);
  EXPECT_FALSE(body.contains("max_tokens"));
  EXPECT_EQ(stats["tokenize"]["last_headers"]["authorization"], "Bearer sk-tok");
  EXPECT_EQ(tokenize_count(fleet.metrics(), "tok", "ok"), "1");
  EXPECT_EQ(tokenize_count(fleet.metrics(), "tok", "timeout"), "0");

  // A completions request of the same text gets the same ids, by its prompt.
  const EngineTokenizeRequest prompt{
      .snapshot = &fleet.snapshot(),
      .route = &route,
      .ctx = &ctx,
      .kind = ApiKind::kCompletions,
      .body = R"({"model":"r","prompt":"you are terse\nsay hi"})",
      .clock = &default_clock(),
      .tls = tls,
  };
  const Ids again =
      engine.run<Ids>([&]() -> Task<Ids> { co_return co_await engine_token_ids(prompt); });
  EXPECT_EQ(again, chat_ids());
  EXPECT_EQ(engine.stats()["tokenize"]["requests"], 2);

  // Nothing is asked for a strategy that ignores token ids.
  const ResolvedRoute plain_route{.pool = &built};
  EngineTokenizeRequest ignored = request;
  ignored.route = &plain_route;
  const Ids none =
      engine.run<Ids>([&]() -> Task<Ids> { co_return co_await engine_token_ids(ignored); });
  EXPECT_FALSE(none.has_value());
  EXPECT_EQ(engine.stats()["tokenize"]["requests"], 2);
}

// call_tokenize against one engine: `base_url` and `timeout_ms` of provider "tok".
TokenizeResult tokenize_on(SimEngine& engine, Fleet& fleet, std::string body) {
  const Candidate& candidate = fleet.pool("tok/m").candidates[0];
  asio::ssl::context tls = make_client_tls_context();
  return engine.run<TokenizeResult>([&]() -> Task<TokenizeResult> {
    co_return co_await call_tokenize(candidate, std::move(body), tls);
  });
}

std::string one_provider(const std::string& url, int timeout_ms) {
  return "[[providers]]\nname = \"tok\"\ntokenize = \"engine\"\ntokenize_timeout_ms = " +
         std::to_string(timeout_ms) + "\nbase_url = \"" + url + "\"\n";
}

TEST(CallTokenize, AHangingEngineTimesOutWithinTheBudget) {
  sim::EngineOptions options;
  options.faults.tokenize_stall_ms = 10000;
  SimEngine engine(options);
  Fleet fleet(one_provider(engine.url(), 100));
  const auto start = std::chrono::steady_clock::now();
  const TokenizeResult result = tokenize_on(engine, fleet, R"({"prompt":"a b"})");
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(result.outcome, Outcome::kTimeout) << result.error;
  EXPECT_TRUE(result.tokens.empty());
  EXPECT_GE(took, milliseconds(100));
  EXPECT_LT(took, milliseconds(2000)) << "the 10 s stall, not the 100 ms budget";
  // The engine counts the request when its own thread reads it, which on a loaded machine can
  // come after the budget ran out here.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (engine.stats()["tokenize"]["requests"] != 1 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(engine.stats()["tokenize"]["requests"], 1) << "the request reached the engine";
  EXPECT_EQ(tokenize_count(fleet.metrics(), "tok", "timeout"), "1");
  EXPECT_EQ(tokenize_count(fleet.metrics(), "tok", "ok"), "0");
}

TEST(CallTokenize, RefusedAndRejectedAreErrors) {
  SimEngine engine;
  {
    Fleet fleet(one_provider("http://127.0.0.1:" + std::to_string(closed_port()), 1000));
    const TokenizeResult refused = tokenize_on(engine, fleet, R"({"prompt":"a"})");
    EXPECT_EQ(refused.outcome, Outcome::kError);
    EXPECT_NE(refused.error.find("connecting"), std::string::npos) << refused.error;
    EXPECT_EQ(tokenize_count(fleet.metrics(), "tok", "error"), "1");
  }
  Fleet fleet(one_provider(engine.url(), 1000));
  const TokenizeResult rejected = tokenize_on(engine, fleet, R"({"model":"m"})");
  EXPECT_EQ(rejected.outcome, Outcome::kError);
  EXPECT_EQ(rejected.error, "status 400");
  EXPECT_EQ(engine.stats()["tokenize"]["rejected"], 1);
  const TokenizeResult ok = tokenize_on(engine, fleet, R"({"prompt":[9,8]})");
  EXPECT_EQ(ok.outcome, Outcome::kOk) << ok.error;
  EXPECT_EQ(ok.tokens, (std::vector<uint32_t>{9, 8}));
}

}  // namespace
}  // namespace rolter
