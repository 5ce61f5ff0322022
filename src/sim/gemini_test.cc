// Gemini's native API (gemini_request.h, gemini_format.h), and the behaviours every API shares
// that arrived with it: stop sequences, the context-length fault and error shapes, seen through
// the Engine.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "sim/engine.h"
#include "sim/gemini_format.h"
#include "sim/gemini_request.h"

namespace rolter::sim {
namespace {

using Json = nlohmann::json;

// The JSON payloads of Gemini SSE events, checking the \r\n\r\n framing.
std::vector<Json> gemini_payloads(const std::vector<std::string>& events) {
  std::vector<Json> out;
  for (const std::string& e : events) {
    EXPECT_EQ(e.rfind("data: ", 0), 0u) << e;
    EXPECT_EQ(e.substr(e.size() - 4), "\r\n\r\n") << e;
    out.push_back(Json::parse(e.substr(6, e.size() - 10)));
  }
  return out;
}

TEST(GeminiTest, PathsNameTheMethodAndModel) {
  struct Case {
    const char* path;
    bool ok;
    ApiKind api;
    const char* model;
    bool stream;
  };
  const Case cases[] = {
      {"/v1beta/models/gemini-2.0-flash:generateContent", true, ApiKind::kGemini,
       "gemini-2.0-flash", false},
      {"/v1beta/models/g:streamGenerateContent", true, ApiKind::kGemini, "g", true},
      {"/v1/models/g:embedContent", true, ApiKind::kGeminiEmbed, "g", false},
      {"/v1beta/models/g:batchEmbedContents", true, ApiKind::kGeminiBatchEmbed, "g", false},
      {"/v1beta/models/g:countTokens", false, ApiKind::kGemini, "", false},
      {"/v1beta/models/:generateContent", false, ApiKind::kGemini, "", false},
      {"/v1beta/models/g", false, ApiKind::kGemini, "", false},
      {"/v1/messages:generateContent", false, ApiKind::kGemini, "", false},
  };
  for (const Case& k : cases) {
    auto got = parse_gemini_path(k.path);
    ASSERT_EQ(got.has_value(), k.ok) << k.path;
    EXPECT_EQ(api_for_path(k.path).has_value(), k.ok) << k.path;
    if (!k.ok) continue;
    EXPECT_EQ(got->api, k.api) << k.path;
    EXPECT_EQ(got->model, k.model) << k.path;
    EXPECT_EQ(got->stream, k.stream) << k.path;
  }
}

TEST(GeminiTest, ReadsGenerateContent) {
  auto r = read_api_request(ApiKind::kGemini, Json::parse(R"({
    "systemInstruction": {"parts": [{"text": "be brief"}]},
    "contents": [{"role": "user", "parts": [{"text": "hello there"},
                                            {"inlineData": {"mimeType": "image/png", "data": "AA"}}]},
                 {"role": "model", "parts": [{"text": "hi"}]},
                 {"role": "user", "parts": [{"fileData": {"fileUri": "gs://x"}}, {"text": "again"}]}],
    "generationConfig": {"maxOutputTokens": 5, "stopSequences": ["x", "y"], "temperature": 0.2,
                         "topP": 0.9, "candidateCount": 2}})"));
  ASSERT_TRUE(r.has_value()) << r.error();
  EXPECT_EQ(r->prompt_text, "be brief\nhello there\nhi\nagain");
  EXPECT_EQ(r->prompt_tokens, 6u);
  EXPECT_EQ(r->max_tokens, 5u);
  EXPECT_EQ(r->stop, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(r->n, 2u);
  EXPECT_FALSE(r->tool.has_value());
}

TEST(GeminiTest, RejectsBadBodies) {
  const char* bodies[] = {
      R"({})",
      R"({"contents": []})",
      R"({"contents": [1]})",
      R"({"contents": [{"parts": "x"}]})",
      R"({"contents": [{"parts": [{"text": "a"}]}], "generationConfig": {"maxOutputTokens": -1}})",
      R"({"contents": [{"parts": [{"text": "a"}]}], "generationConfig": {"stopSequences": "x"}})",
      R"({"contents": [{"parts": [{"text": "a"}]}], "generationConfig": {"candidateCount": 9}})",
      R"({"contents": [{"parts": [{"text": "a"}]}], "generationConfig": 3})",
  };
  for (const char* body : bodies) {
    EXPECT_FALSE(read_api_request(ApiKind::kGemini, Json::parse(body)).has_value()) << body;
  }
  EXPECT_FALSE(read_api_request(ApiKind::kGeminiEmbed, Json::parse("{}")).has_value());
  EXPECT_FALSE(
      read_api_request(ApiKind::kGeminiBatchEmbed, Json::parse(R"({"requests":[]})")).has_value());
}

TEST(GeminiTest, StreamIsTokenChunksThenFinishWithUsage) {
  Completion c;
  c.api = ApiKind::kGemini;
  c.id = "gen-x";
  c.model = "g";
  c.prompt_tokens = 4;
  c.cached_tokens = 2;
  c.choices = {{"a", " b"}};
  c.hit_max_tokens = true;
  std::vector<std::string> events = {render_stream_token(c, 0, 0), render_stream_token(c, 0, 1)};
  for (const auto& e : render_stream_epilogue(c)) events.push_back(e);
  const std::vector<Json> p = gemini_payloads(events);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0]["candidates"][0]["content"]["parts"][0]["text"], "a");
  EXPECT_EQ(p[0]["candidates"][0]["content"]["role"], "model");
  EXPECT_FALSE(p[0]["candidates"][0].contains("finishReason"));
  EXPECT_FALSE(p[0].contains("usageMetadata"));
  EXPECT_EQ(p[1]["candidates"][0]["content"]["parts"][0]["text"], " b");
  EXPECT_EQ(p[2]["candidates"][0]["finishReason"], "MAX_TOKENS");
  EXPECT_EQ(p[2]["usageMetadata"], Json::parse(R"({"promptTokenCount":4,"candidatesTokenCount":2,
      "totalTokenCount":6,"cachedContentTokenCount":2})"));
  EXPECT_EQ(render_stream_prologue(c).size(), 0u);

  const Json whole = Json::parse(render_response(c));
  EXPECT_EQ(whole["candidates"][0]["content"]["parts"][0]["text"], "a b");
  EXPECT_EQ(whole["modelVersion"], "g");
  c.cached_tokens = 0;
  EXPECT_FALSE(
      Json::parse(render_response(c))["usageMetadata"].contains("cachedContentTokenCount"));
}

TEST(GeminiTest, ToolCallComesWholeInTheLastChunk) {
  Completion c;
  c.api = ApiKind::kGemini;
  c.tool_call = ToolCall{"", "f", R"({"q":"the"})"};
  c.choices = {split_arguments(c.tool_call->arguments)};
  for (size_t i = 0; i < c.length(); ++i) EXPECT_EQ(render_stream_token(c, 0, i), "");
  const std::vector<Json> p = gemini_payloads(render_stream_epilogue(c));
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0]["candidates"][0]["content"]["parts"][0]["functionCall"],
            Json::parse(R"({"name":"f","args":{"q":"the"}})"));
  EXPECT_EQ(p[0]["candidates"][0]["finishReason"], "STOP");
  EXPECT_EQ(p[0]["usageMetadata"]["candidatesTokenCount"], c.length());
}

TEST(GeminiTest, ErrorStatusFollowsTheHttpStatus) {
  const std::pair<int, const char*> cases[] = {
      {400, "INVALID_ARGUMENT"}, {401, "UNAUTHENTICATED"},    {403, "PERMISSION_DENIED"},
      {404, "NOT_FOUND"},        {429, "RESOURCE_EXHAUSTED"}, {500, "INTERNAL"},
      {503, "UNAVAILABLE"},      {504, "DEADLINE_EXCEEDED"},  {502, "INTERNAL"},
  };
  for (const auto& [status, name] : cases) {
    const Json e = Json::parse(render_error(ErrorShape::kGemini, status, "boom"));
    EXPECT_EQ(e["error"]["code"], status);
    EXPECT_EQ(e["error"]["status"], name) << status;
    EXPECT_EQ(e["error"]["message"], "boom");
  }
}

TEST(GeminiTest, EngineServesGenerateAndEmbed) {
  Engine e(EngineOptions{.seed = 7, .embedding_dims = 4});
  RequestPlan gen = e.begin(ApiKind::kGemini, "/v1beta/models/gem-1:streamGenerateContent",
                            R"({"contents":[{"parts":[{"text":"a b c"}]}],
                                "generationConfig":{"maxOutputTokens":3}})",
                            {});
  ASSERT_EQ(gen.status, 200) << gen.body;
  EXPECT_TRUE(gen.stream);
  EXPECT_EQ(gen.completion.model, "gem-1");
  EXPECT_EQ(gen.completion.length(), 3u);
  EXPECT_TRUE(gen.completion.hit_max_tokens);
  EXPECT_EQ(e.stats_json()["last_path"], "/v1beta/models/gem-1:streamGenerateContent");

  RequestPlan one = e.begin(ApiKind::kGeminiEmbed, "/v1beta/models/emb:embedContent",
                            R"({"content":{"parts":[{"text":"a b"}]}})", {});
  ASSERT_EQ(one.status, 200) << one.body;
  EXPECT_EQ(Json::parse(one.body)["embedding"]["values"].size(), 4u);
  RequestPlan batch =
      e.begin(ApiKind::kGeminiBatchEmbed, "/v1beta/models/emb:batchEmbedContents",
              R"({"requests":[{"content":{"parts":[{"text":"a"}]},"outputDimensionality":2},
                              {"content":{"parts":[{"text":"b"}]}}]})",
              {});
  ASSERT_EQ(batch.status, 200) << batch.body;
  const Json list = Json::parse(batch.body)["embeddings"];
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["values"].size(), 2u);
}

// A stop sequence " " always ends the generated text after its first word, on every API.
TEST(GeminiTest, StopSequencesOnEveryApi) {
  struct Case {
    ApiKind api;
    const char* path;
    const char* body;
    const char* finish_field;  // JSON pointer into the non-streaming body
    const char* finish;
  };
  const Case cases[] = {
      {ApiKind::kChat, "/v1/chat/completions",
       R"({"stop":" ","messages":[{"role":"user","content":"hi"}]})", "/choices/0/finish_reason",
       "stop"},
      {ApiKind::kCompletions, "/v1/completions", R"({"stop":[" "],"prompt":"hi"})",
       "/choices/0/finish_reason", "stop"},
      {ApiKind::kMessages, "/v1/messages",
       R"({"max_tokens":8,"stop_sequences":[" "],"messages":[{"role":"user","content":"hi"}]})",
       "/stop_reason", "stop_sequence"},
      {ApiKind::kGemini, "/v1beta/models/g:generateContent",
       R"({"contents":[{"parts":[{"text":"hi"}]}],"generationConfig":{"stopSequences":[" "],
           "maxOutputTokens":8}})",
       "/candidates/0/finishReason", "STOP"},
  };
  for (const Case& k : cases) {
    Engine e(EngineOptions{.seed = 7});
    RequestPlan plan = e.begin(k.api, k.path, k.body, {});
    ASSERT_EQ(plan.status, 200) << k.path << ": " << plan.body;
    EXPECT_EQ(plan.completion.length(), 1u) << k.path;
    EXPECT_EQ(plan.model_request->output_tokens, 1u) << k.path;
    const Json body = Json::parse(render_response(plan.completion));
    EXPECT_EQ(body.at(Json::json_pointer(k.finish_field)), k.finish) << k.path;
    if (k.api == ApiKind::kMessages) {
      EXPECT_EQ(body["stop_sequence"], " ");
    }
  }
}

TEST(GeminiTest, ContextLengthFaultInEachShape) {
  struct Case {
    ApiKind api;
    const char* path;
    const char* body;
    const char* pointer;  // where the message is
    const char* message;
  };
  const Case cases[] = {
      {ApiKind::kChat, "/v1/chat/completions",
       R"({"messages":[{"role":"user","content":"a b c d"}]})", "/message",
       "This model's maximum context length is 3 tokens. However, you requested 4 tokens in the "
       "messages, Please reduce the length of the messages."},
      {ApiKind::kMessages, "/v1/messages",
       R"({"max_tokens":1,"messages":[{"role":"user","content":"a b c d"}]})", "/error/message",
       "prompt is too long: 4 tokens > 3 maximum"},
      {ApiKind::kGemini, "/v1beta/models/g:generateContent",
       R"({"contents":[{"parts":[{"text":"a b c d"}]}]})", "/error/message",
       "The input token count (4) exceeds the maximum number of tokens allowed (3)."},
  };
  for (const Case& k : cases) {
    Engine e(EngineOptions{.faults = Faults{.max_model_len = 3}});
    RequestPlan plan = e.begin(k.api, k.path, k.body, {});
    ASSERT_EQ(plan.status, 400) << k.path;
    const Json body = Json::parse(plan.body);
    EXPECT_EQ(body.at(Json::json_pointer(k.pointer)), k.message) << k.path;
    if (k.api == ApiKind::kChat) {
      EXPECT_EQ(body["object"], "error");
      EXPECT_EQ(body["type"], "BadRequestError");
      EXPECT_EQ(body["code"], 400);
    }
    if (k.api == ApiKind::kGemini) {
      EXPECT_EQ(body["error"]["status"], "INVALID_ARGUMENT");
    }
    // Exactly at the limit is fine.
    Engine at_limit(EngineOptions{.faults = Faults{.max_model_len = 4}});
    EXPECT_EQ(at_limit.begin(k.api, k.path, k.body, {}).status, 200) << k.path;
  }
  Engine e(EngineOptions{.faults = Faults{.max_model_len = 3}});
  EXPECT_EQ(Json::parse(e.models_json())["data"][0]["max_model_len"], 3);
}

TEST(GeminiTest, FaultErrorsTakeTheApisShape) {
  Engine e(EngineOptions{.faults = Faults{.status_429_retry_after_s = 1}});
  RequestPlan plan = e.begin(ApiKind::kGemini, "/v1beta/models/g:generateContent",
                             R"({"contents":[{"parts":[{"text":"a"}]}]})", {});
  EXPECT_EQ(plan.status, 429);
  EXPECT_EQ(Json::parse(plan.body)["error"]["status"], "RESOURCE_EXHAUSTED");
  RequestPlan bad = e.begin(ApiKind::kGemini, "/v1beta/models/g:generateContent", "{", {});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(Json::parse(bad.body)["error"]["status"], "INVALID_ARGUMENT");
}

TEST(GeminiTest, AnthropicUsageSplitsCacheReads) {
  Completion c;
  c.api = ApiKind::kMessages;
  c.prompt_tokens = 10;
  c.cached_tokens = 4;
  c.choices = {{"a"}};
  const Json usage = Json::parse(render_response(c))["usage"];
  EXPECT_EQ(usage["input_tokens"], 6);
  EXPECT_EQ(usage["cache_read_input_tokens"], 4);
  EXPECT_EQ(usage["cache_creation_input_tokens"], 0);
  EXPECT_EQ(usage["output_tokens"], 1);
}

TEST(GeminiTest, AnthropicToolResultTextCountsAsPrompt) {
  auto r = read_api_request(ApiKind::kMessages, Json::parse(R"({"max_tokens":1,
    "system":[{"type":"text","text":"sys words"}],
    "messages":[{"role":"user","content":[{"type":"image","source":{}},{"type":"text","text":"q"}]},
                {"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]},
                {"role":"user","content":[{"type":"tool_result","tool_use_id":"t",
                  "content":[{"type":"text","text":"twenty degrees"}]}]}]})"));
  ASSERT_TRUE(r.has_value()) << r.error();
  EXPECT_EQ(r->prompt_text, "sys words\nq\ntwenty degrees");
  EXPECT_FALSE(r->tool.has_value());
}

}  // namespace
}  // namespace rolter::sim
