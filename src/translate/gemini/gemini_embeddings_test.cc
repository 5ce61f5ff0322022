// embeddings_to_gemini(): /v1/embeddings as batchEmbedContents and back.
#include "translate/gemini/gemini_translator.h"

#include "translate/gemini/gemini_test_util.h"

namespace rolter {
namespace {

using gemini_test::Expect;
using gemini_test::Json;

struct EmbeddingsCase {
  std::string name;
  std::string model;
  std::string body;
  std::string path;
  std::vector<Expect> expects;
};

TEST(GeminiEmbeddings, TranslatesRequests) {
  const std::vector<EmbeddingsCase> cases = {
      {"one_string",
       "text-embedding-004",
       R"({"model":"x","input":"hello"})",
       "/v1beta/models/text-embedding-004:batchEmbedContents",
       {{"/requests",
         R"([{"model":"models/text-embedding-004","content":{"parts":[{"text":"hello"}]}}])"}}},
      {"array_and_dimensions",
       "models/gemini-embedding-001",
       R"({"input":["a","b"],"dimensions":256,"encoding_format":"float","user":"u"})",
       "/v1beta/models/gemini-embedding-001:batchEmbedContents",
       {{"/requests", R"([
          {"model":"models/gemini-embedding-001","content":{"parts":[{"text":"a"}]},"outputDimensionality":256},
          {"model":"models/gemini-embedding-001","content":{"parts":[{"text":"b"}]},"outputDimensionality":256}])"}}},
      {"model_from_body",
       "",
       R"({"model":"embed-1","input":"x"})",
       "/v1beta/models/embed-1:batchEmbedContents",
       {{"/requests/0/model", R"("models/embed-1")"}}},
  };
  for (const auto& c : cases) {
    auto out = embeddings_to_gemini().request(c.body, {.model = c.model});
    ASSERT_TRUE(out.has_value()) << c.name << ": " << out.error().message;
    EXPECT_EQ(out->path, c.path) << c.name;
    EXPECT_FALSE(out->stream);
    gemini_test::expect_fields(gemini_test::parse(out->body), c.expects, c.name);
  }
}

TEST(GeminiEmbeddings, RefusesWhatCannotBeTranslated) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"nope", ""},
      {R"({"model":"m"})", "input"},
      {R"({"input":[]})", "input"},
      {R"({"input":[1,2,3]})", "input"},
      {R"({"input":[[1,2],[3]]})", "input"},
      {R"({"input":"a","encoding_format":"base64"})", "encoding_format"},
      {R"({"input":"a","dimensions":-3})", "dimensions"},
  };
  for (const auto& [body, param] : cases) {
    auto out = embeddings_to_gemini().request(body, {.model = "m"});
    ASSERT_FALSE(out.has_value()) << body;
    EXPECT_EQ(out.error().status, 400u);
    EXPECT_EQ(out.error().param, param) << body;
  }
}

TEST(GeminiEmbeddings, TranslatesResponses) {
  auto out =
      embeddings_to_gemini().response(R"({"embeddings":[{"values":[0.5,-1,2e-3]},{"values":[]}]})",
                                      {.model = "text-embedding-004"});
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(gemini_test::parse(*out), Json::parse(R"({"object":"list","model":"text-embedding-004",
      "data":[{"object":"embedding","index":0,"embedding":[0.5,-1,2e-3]},
              {"object":"embedding","index":1,"embedding":[]}],
      "usage":{"prompt_tokens":0,"total_tokens":0}})"));
  for (const std::string bad :
       {"", "{}", R"({"embeddings":[{}]})", R"({"embeddings":[{"values":["x"]}]})"}) {
    auto refused = embeddings_to_gemini().response(bad, {.model = "m"});
    ASSERT_FALSE(refused.has_value()) << bad;
    EXPECT_EQ(refused.error().status, 502u);
  }
}

TEST(GeminiEmbeddings, ErrorsAndNoStream) {
  const TranslatedError error = embeddings_to_gemini().error(
      429, R"({"error":{"code":429,"message":"Quota","status":"RESOURCE_EXHAUSTED"}})");
  EXPECT_EQ(error.status, 429u);
  EXPECT_EQ(gemini_test::parse(error.body)["error"]["type"], "rate_limit_error");
  EXPECT_EQ(embeddings_to_gemini().stream({.model = "m"}), nullptr);
}

}  // namespace
}  // namespace rolter
