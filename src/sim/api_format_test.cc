#include "sim/api_format.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "sim/float_base64.h"

namespace rolter::sim {
namespace {

using Json = nlohmann::json;

Completion two_choices(ApiKind api) {
  Completion c;
  c.api = api;
  c.id = api == ApiKind::kResponses ? "resp_x" : "cmpl-x";
  c.model = "m";
  c.prompt_tokens = 3;
  c.choices = {{"a", " b"}, {"c", " d"}};
  return c;
}

// The `data:` payloads of SSE events, parsed (skipping [DONE]).
std::vector<Json> payloads(const std::vector<std::string>& events) {
  std::vector<Json> out;
  for (const auto& e : events) {
    const auto start = e.find("data: ") + 6;
    const std::string data = e.substr(start, e.find("\n\n") - start);
    if (data != "[DONE]") out.push_back(Json::parse(data));
  }
  return out;
}

TEST(ApiFormatTest, EveryChoiceIsRenderedWithItsIndex) {
  struct Case {
    ApiKind api;
    const char* text_pointer;  // where a choice's text is
  };
  for (const Case& k :
       {Case{ApiKind::kChat, "/message/content"}, Case{ApiKind::kCompletions, "/text"}}) {
    Json body = Json::parse(render_response(two_choices(k.api)));
    ASSERT_EQ(body["choices"].size(), 2u);
    EXPECT_EQ(body["choices"][1]["index"], 1);
    EXPECT_EQ(body["choices"][1][Json::json_pointer(k.text_pointer)], "c d");
    EXPECT_EQ(body["choices"][1]["finish_reason"], "stop");
    EXPECT_EQ(body["usage"]["completion_tokens"], 4);  // both choices count
  }
}

TEST(ApiFormatTest, StreamChunksCarryTheChoiceIndexAndEachChoiceFinishes) {
  Completion c = two_choices(ApiKind::kChat);
  c.hit_max_tokens = true;
  c.include_usage = true;
  Json token = payloads({render_stream_token(c, 1, 0)})[0];
  EXPECT_EQ(token["choices"][0]["index"], 1);
  EXPECT_EQ(token["choices"][0]["delta"]["content"], "c");
  std::vector<Json> tail = payloads(render_stream_epilogue(c));
  ASSERT_EQ(tail.size(), 3u);  // one finish chunk per choice, then usage
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(tail[i]["choices"][0]["index"], i);
    EXPECT_EQ(tail[i]["choices"][0]["finish_reason"], "length");
  }
  EXPECT_EQ(tail[2]["usage"]["completion_tokens"], 4);
}

TEST(ApiFormatTest, ResponsesCutByMaxOutputTokensAreIncomplete) {
  struct Case {
    bool hit_max_tokens;
    const char* status;
    const char* last_event;
    Json details;
  };
  const Case cases[] = {
      {true, "incomplete", "response.incomplete", {{"reason", "max_output_tokens"}}},
      {false, "completed", "response.completed", nullptr},
  };
  for (const Case& k : cases) {
    Completion c = two_choices(ApiKind::kResponses);
    c.choices.resize(1);
    c.hit_max_tokens = k.hit_max_tokens;
    Json body = Json::parse(render_response(c));
    EXPECT_EQ(body["status"], k.status);
    EXPECT_EQ(body["incomplete_details"], k.details);
    EXPECT_EQ(body["output"][0]["status"], k.status);
    const std::vector<std::string> tail = render_stream_epilogue(c);
    EXPECT_EQ(tail.back().rfind(std::string("event: ") + k.last_event + "\n", 0), 0u);
    Json last = payloads({tail.back()})[0];
    EXPECT_EQ(last["type"], k.last_event);
    EXPECT_EQ(last["response"]["status"], k.status);
    EXPECT_EQ(last["response"]["incomplete_details"], k.details);
  }
}

TEST(ApiFormatTest, EmbeddingsAsFloatsOrBase64) {
  const std::vector<Embedding> data = {{{1.0f, 0.5f}}};
  Json floats = Json::parse(render_embeddings("m", data, 2, EmbeddingEncoding::kFloat));
  EXPECT_EQ(floats["data"][0]["embedding"], Json::parse("[1.0, 0.5]"));
  Json b64 = Json::parse(render_embeddings("m", data, 2, EmbeddingEncoding::kBase64));
  EXPECT_EQ(b64["data"][0]["embedding"], float32_base64(data[0].vector));
}

}  // namespace
}  // namespace rolter::sim
