#include "sim/api_request.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/engine.h"
#include "sim/text_generator.h"

namespace rolter::sim {
namespace {

using Json = nlohmann::json;

TEST(ApiRequestTest, ChatCountsMessageWords) {
  auto r = read_api_request(ApiKind::kChat, Json::parse(R"({
    "model": "m1", "stream": true, "stream_options": {"include_usage": true},
    "max_tokens": 5,
    "messages": [{"role": "system", "content": "be brief"},
                 {"role": "user", "content": [{"type": "text", "text": "hello there world"},
                                              {"type": "image_url", "image_url": {"url": "x"}}]}]
  })"));
  ASSERT_TRUE(r.has_value()) << r.error();
  EXPECT_EQ(r->model, "m1");
  EXPECT_TRUE(r->stream);
  EXPECT_TRUE(r->include_usage);
  EXPECT_EQ(r->prompt_tokens, 5u);
  EXPECT_EQ(r->max_tokens, 5u);
}

TEST(ApiRequestTest, MaxCompletionTokensWinsOverMaxTokens) {
  auto r = read_api_request(
      ApiKind::kChat,
      Json::parse(R"({"messages": [], "max_tokens": 9, "max_completion_tokens": 3})"));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->max_tokens, 3u);
}

TEST(ApiRequestTest, CompletionsTokenArrayPrompt) {
  auto r = read_api_request(ApiKind::kCompletions,
                            Json::parse(R"({"model": "m", "prompt": [1, 2, 3, 4]})"));
  ASSERT_TRUE(r.has_value()) << r.error();
  EXPECT_EQ(r->prompt_tokens, 4u);
  EXPECT_FALSE(r->max_tokens.has_value());
}

TEST(ApiRequestTest, EmbeddingsInputs) {
  auto r = read_api_request(ApiKind::kEmbeddings,
                            Json::parse(R"({"input": ["a b", "c"], "stream": true})"));
  ASSERT_TRUE(r.has_value()) << r.error();
  EXPECT_EQ(r->inputs.size(), 2u);
  EXPECT_EQ(r->prompt_tokens, 3u);
  EXPECT_FALSE(r->stream);
}

TEST(ApiRequestTest, ResponsesAndMessages) {
  auto resp = read_api_request(
      ApiKind::kResponses,
      Json::parse(R"({"instructions": "x y", "input": "one two three", "max_output_tokens": 2})"));
  ASSERT_TRUE(resp.has_value()) << resp.error();
  EXPECT_EQ(resp->prompt_tokens, 5u);
  EXPECT_EQ(resp->max_tokens, 2u);
  auto msg = read_api_request(ApiKind::kMessages, Json::parse(R"({
    "system": [{"type": "text", "text": "sys"}], "max_tokens": 4,
    "messages": [{"role": "user", "content": "hi you"}]})"));
  ASSERT_TRUE(msg.has_value()) << msg.error();
  EXPECT_EQ(msg->prompt_tokens, 3u);
}

TEST(ApiRequestTest, ShapeErrors) {
  EXPECT_FALSE(read_api_request(ApiKind::kChat, Json::parse(R"({"model": "m"})")).has_value());
  EXPECT_FALSE(
      read_api_request(ApiKind::kChat, Json::parse(R"({"messages": [], "max_tokens": -1})"))
          .has_value());
  EXPECT_FALSE(
      read_api_request(ApiKind::kCompletions, Json::parse(R"({"prompt": 3})")).has_value());
  EXPECT_FALSE(read_api_request(ApiKind::kChat, Json::parse("[1]")).has_value());
}

TEST(ApiRequestTest, ChoicesDimensionsEncodingAndBatches) {
  struct Case {
    ApiKind api;
    const char* body;
    bool ok;
    size_t n;
    size_t inputs;         // prompts or embeddings inputs read
    size_t prompt_tokens;  // summed over a batch
    size_t dimensions;     // 0 = none given
    EmbeddingEncoding encoding;
  };
  constexpr auto kF = EmbeddingEncoding::kFloat;
  const Case cases[] = {
      {ApiKind::kChat, R"({"messages": [], "n": 3})", true, 3, 0, 0, 0, kF},
      {ApiKind::kChat, R"({"messages": [], "n": null})", true, 1, 0, 0, 0, kF},
      {ApiKind::kChat, R"({"messages": [], "n": 0})", false},
      {ApiKind::kChat, R"({"messages": [], "n": 129})", false},
      {ApiKind::kChat, R"({"messages": [], "n": "2"})", false},
      {ApiKind::kCompletions, R"({"prompt": "a b", "n": 2})", true, 2, 1, 2, 0, kF},
      {ApiKind::kCompletions, R"({"prompt": ["a b", "c"]})", true, 1, 2, 3, 0, kF},
      {ApiKind::kCompletions, R"({"prompt": [[1, 2], [3, 4, 5]], "n": 2})", true, 2, 2, 5, 0, kF},
      {ApiKind::kCompletions, R"({"prompt": []})", false},
      {ApiKind::kCompletions, R"({"prompt": ["a", 1]})", false},
      {ApiKind::kResponses, R"({"input": "x", "n": 0})", true, 1, 0, 1, 0, kF},  // not its field
      {ApiKind::kEmbeddings, R"({"input": "a", "dimensions": 8})", true, 1, 1, 1, 8, kF},
      {ApiKind::kEmbeddings, R"({"input": "a", "dimensions": 0})", false},
      {ApiKind::kEmbeddings, R"({"input": "a", "dimensions": -4})", false},
      {ApiKind::kEmbeddings, R"({"input": "a", "dimensions": 70000})", false},
      {ApiKind::kEmbeddings, R"({"input": "a", "dimensions": 1.5})", false},
      {ApiKind::kEmbeddings, R"({"input": "a", "encoding_format": "base64"})", true, 1, 1, 1, 0,
       EmbeddingEncoding::kBase64},
      {ApiKind::kEmbeddings, R"({"input": "a", "encoding_format": "float"})", true, 1, 1, 1, 0, kF},
      {ApiKind::kEmbeddings, R"({"input": "a", "encoding_format": "hex"})", false},
  };
  for (const Case& c : cases) {
    auto r = read_api_request(c.api, Json::parse(c.body));
    ASSERT_EQ(r.has_value(), c.ok) << c.body;
    if (!c.ok) continue;
    EXPECT_EQ(r->n, c.n) << c.body;
    EXPECT_EQ(r->inputs.size(), c.inputs) << c.body;
    EXPECT_EQ(r->prompt_tokens, c.prompt_tokens) << c.body;
    EXPECT_EQ(r->dimensions.value_or(0), c.dimensions) << c.body;
    EXPECT_EQ(r->encoding, c.encoding) << c.body;
  }
}

TEST(EngineTest, BatchPromptsTimesNChoicesInOpenAIOrder) {
  Engine e(EngineOptions{});
  RequestPlan p = e.begin(ApiKind::kCompletions, "/v1/completions",
                          R"({"prompt": ["one two", "three"], "n": 2, "max_tokens": 3})", {});
  ASSERT_EQ(p.status, 200) << p.body;
  const Completion& c = p.completion;
  ASSERT_EQ(c.choices.size(), 4u);
  EXPECT_EQ(c.prompt_tokens, 3u);
  EXPECT_EQ(c.length(), 3u);
  EXPECT_EQ(c.completion_tokens(), 12u);
  EXPECT_TRUE(c.hit_max_tokens);
  // Choice p * n + j is choice j of prompt p; choice 0 of a prompt is its n = 1 answer.
  EXPECT_EQ(c.choices[0], generate_tokens(0, "one two", 3));
  EXPECT_EQ(c.choices[2], generate_tokens(0, "three", 3));
  EXPECT_NE(c.choices[0], c.choices[1]);
  EXPECT_NE(c.choices[2], c.choices[3]);
  EXPECT_EQ(p.model_request->output_tokens, 3u);
}

TEST(EngineTest, EngineCapBelowTheClientsEndsTheTextWithoutHittingMaxTokens) {
  EngineOptions opt;
  opt.max_tokens_cap = 2;
  Engine e(opt);
  RequestPlan p = e.begin(ApiKind::kResponses, "/v1/responses",
                          R"({"input": "x", "max_output_tokens": 5})", {});
  EXPECT_EQ(p.completion.length(), 2u);
  EXPECT_FALSE(p.completion.hit_max_tokens);
}

TEST(EngineTest, EmbeddingsDimensionsAndBase64) {
  Engine e(EngineOptions{});
  RequestPlan p = e.begin(ApiKind::kEmbeddings, "/v1/embeddings",
                          R"({"input": "a b", "dimensions": 5, "encoding_format": "base64"})", {});
  ASSERT_EQ(p.status, 200) << p.body;
  Json body = Json::parse(p.body);
  // 5 float32 values: 20 bytes, 28 base64 characters.
  EXPECT_EQ(body["data"][0]["embedding"].get<std::string>().size(), 28u);
  RequestPlan bad =
      e.begin(ApiKind::kEmbeddings, "/v1/embeddings", R"({"input": "a", "dimensions": 0})", {});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(Json::parse(bad.body)["error"]["type"], "invalid_request_error");
}

TEST(EngineTest, GeneratesDeterministicTextAndEchoesTheModel) {
  EngineOptions opt;
  opt.seed = 9;
  opt.latency.time_scale = 0;
  Engine a(opt);
  opt.index = 1;
  Engine b(opt);
  const std::string body =
      R"({"model":"rewritten","messages":[{"role":"user","content":"a b c"}],"max_tokens":4})";
  RequestPlan pa = a.begin(ApiKind::kChat, "/v1/chat/completions", body, {});
  RequestPlan pb = b.begin(ApiKind::kChat, "/v1/chat/completions", body, {});
  EXPECT_EQ(pa.status, 200);
  EXPECT_EQ(pa.completion.model, "rewritten");
  EXPECT_EQ(pa.completion.length(), 4u);
  EXPECT_EQ(pa.completion.text(), pb.completion.text());
  // The model request: the prompt's word ids, the output length, and the adapter the unserved
  // model name addresses.
  ASSERT_TRUE(pa.model_request);
  EXPECT_EQ(pa.model_request->tokens.size(), 3u);
  EXPECT_EQ(pa.model_request->output_tokens, 4u);
  EXPECT_EQ(pa.model_request->adapter, "rewritten");
  // A non-streaming body is rendered once the model reports the cache hit.
  EXPECT_TRUE(pa.body.empty());
  Json response = Json::parse(render_response(pa.completion));
  EXPECT_EQ(response["usage"]["prompt_tokens"], 3);
  EXPECT_EQ(response["usage"]["completion_tokens"], 4);
  EXPECT_EQ(response["usage"]["prompt_tokens_details"]["cached_tokens"], 0);
  a.finish(Outcome::kCompleted);
  Json stats = a.stats_json();
  EXPECT_EQ(stats["requests"], 1);
  EXPECT_EQ(stats["completed"], 1);
  EXPECT_EQ(stats["in_flight"], 0);
  EXPECT_EQ(stats["last_model"], "rewritten");
  EXPECT_EQ(stats["last_body"]["max_tokens"], 4);
}

// /tokenize answers exactly the ids the same conversation puts in the model (and so in the KV
// cache and its events): chat, a text prompt, and a token-id prompt returned as is.
TEST(EngineTest, TokenizeAgreesWithTheModelRequest) {
  struct Case {
    ApiKind api;
    std::string_view path;
    std::string_view request;   // an inference request
    std::string_view tokenize;  // the /tokenize body of the same conversation
  };
  const Case cases[] = {
      {ApiKind::kChat, "/v1/chat/completions",
       R"({"model":"m","messages":[{"role":"system","content":"be brief"},)"
       R"({"role":"user","content":[{"type":"text","text":"hello there"}]}],"max_tokens":2})",
       R"({"model":"m","messages":[{"role":"system","content":"be brief"},)"
       R"({"role":"user","content":[{"type":"text","text":"hello there"}]}]})"},
      {ApiKind::kCompletions, "/v1/completions", R"({"model":"m","prompt":"one two three"})",
       R"({"model":"m","prompt":"one two three"})"},
      {ApiKind::kCompletions, "/v1/completions", R"({"prompt":[7, 4294967295, 0]})",
       R"({"prompt":[7, 4294967295, 0]})"},
  };
  for (const Case& c : cases) {
    Engine e(EngineOptions{});
    RequestPlan plan = e.begin(c.api, c.path, c.request, {});
    ASSERT_TRUE(plan.model_request) << c.request;
    const Engine::TokenizeAnswer answer = e.tokenize(c.tokenize);
    ASSERT_EQ(answer.status, 200) << answer.body;
    const Json body = Json::parse(answer.body);
    EXPECT_EQ(body["tokens"].get<std::vector<uint32_t>>(), plan.model_request->tokens)
        << c.tokenize;
    EXPECT_EQ(body["count"], plan.model_request->tokens.size());
    EXPECT_EQ(body["max_model_len"], 32768);
    const Json stats = e.stats_json();
    EXPECT_EQ(stats["tokenize"]["requests"], 1);
    EXPECT_EQ(stats["tokenize"]["last_body"], Json::parse(c.tokenize));
    EXPECT_EQ(stats["requests"], 1) << "/tokenize is not an inference request";
  }
  Engine e(EngineOptions{});
  const Json ids = Json::parse(e.tokenize(R"({"prompt":[5,6]})").body)["tokens"];
  EXPECT_EQ(ids, Json::parse("[5,6]"));
}

TEST(EngineTest, TokenizeRejectsBadBodies) {
  Engine e(EngineOptions{});
  for (std::string_view body : {"{nope", "[1]", R"({"model":"m"})", R"({"messages":"hi"})",
                                R"({"prompt":{"a":1}})", R"({"model":7,"prompt":"x"})"}) {
    const Engine::TokenizeAnswer answer = e.tokenize(body);
    EXPECT_EQ(answer.status, 400) << body;
    EXPECT_EQ(Json::parse(answer.body)["error"]["type"], "invalid_request_error") << body;
  }
  EXPECT_EQ(e.stats_json()["tokenize"]["rejected"], 6);
  e.reset_stats();
  EXPECT_EQ(e.stats_json()["tokenize"]["requests"], 0);
  EXPECT_TRUE(e.stats_json()["tokenize"]["last_body"].is_null());
}

TEST(EngineTest, BadJsonIsRejected) {
  Engine e(EngineOptions{});
  RequestPlan p = e.begin(ApiKind::kMessages, "/v1/messages", "{nope", {});
  EXPECT_EQ(p.status, 400);
  EXPECT_EQ(Json::parse(p.body)["type"], "error");
}

TEST(TextGeneratorTest, CountsWords) {
  EXPECT_EQ(count_words(""), 0u);
  EXPECT_EQ(count_words("  a\tb\n c  "), 3u);
  EXPECT_EQ(generate_tokens(1, "p", 3), generate_tokens(1, "p", 3));
  EXPECT_NE(generate_tokens(1, "p", 8), generate_tokens(2, "p", 8));
}

}  // namespace
}  // namespace rolter::sim
