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
  EXPECT_EQ(pa.completion.tokens.size(), 4u);
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
