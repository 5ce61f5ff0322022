#include "inspect/model_rewrite.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "inspect/request_inspector.h"

namespace rolter {
namespace {

class ModelRewriteTest : public ::testing::Test {
 protected:
  // Rewrites `body` to `new_model` and checks that the result is `body` with only `model` changed.
  void check_rewrite(const std::string& body, std::string_view new_model,
                     ApiKind kind = ApiKind::kChatCompletions) {
    RequestFacts facts;
    auto ok = inspector_.inspect(body, kind, {}, facts);
    ASSERT_TRUE(ok) << ok.error().message;
    auto pieces = rewrite_model(body, facts, new_model);
    ASSERT_TRUE(pieces) << pieces.error().message;
    EXPECT_EQ(pieces->prefix.data(), body.data());  // views, not copies
    EXPECT_EQ(pieces->suffix.data() + pieces->suffix.size(), body.data() + body.size());
    std::string rewritten;
    pieces->append_to(rewritten);
    EXPECT_EQ(rewritten.size(), pieces->size());

    auto before = nlohmann::json::parse(body);
    auto after = nlohmann::json::parse(rewritten);
    EXPECT_EQ(after["model"], std::string(new_model));
    before["model"] = std::string(new_model);
    EXPECT_EQ(before, after);

    // The gateway itself reads the rewritten body back the same way.
    RequestFacts reread;
    ASSERT_TRUE(inspector_.inspect(rewritten, kind, {}, reread));
    EXPECT_EQ(reread.model, new_model);
    EXPECT_EQ(reread.prompt_digest, facts.prompt_digest);
    EXPECT_EQ(reread.model_token_offset, facts.model_token_offset);
  }

  RequestInspector inspector_;
};

TEST_F(ModelRewriteTest, ReplacesOnlyTheModel) {
  check_rewrite(R"({"model":"qwen3","messages":[{"role":"user","content":"hi"}],"stream":true})",
                "Qwen/Qwen3-8B");
  check_rewrite(R"({"messages":[{"role":"user","content":"model"}],  "model"  :  "x"  })", "y");
  check_rewrite("{\n  \"model\": \"a\\\"b\",\n  \"prompt\": \"p\"\n}", "plain",
                ApiKind::kCompletions);
}

TEST_F(ModelRewriteTest, EscapesTheNewModel) {
  const std::string body = R"({"model":"m","input":"x"})";
  check_rewrite(body, "we\"ird\\name", ApiKind::kEmbeddings);
  check_rewrite(body, "tab\tnew\nline\r\b\f\x01\x1f", ApiKind::kEmbeddings);
  check_rewrite(body, "caf\xc3\xa9/\xf0\x9f\x98\x80", ApiKind::kEmbeddings);

  RequestFacts facts;
  ASSERT_TRUE(inspector_.inspect(body, ApiKind::kEmbeddings, {}, facts));
  auto pieces = rewrite_model(body, facts, "a\"b\\c\n\x01");
  ASSERT_TRUE(pieces);
  EXPECT_EQ(pieces->model_token, R"("a\"b\\c\n\u0001")");
  pieces = rewrite_model(body, facts, "");
  ASSERT_TRUE(pieces);
  EXPECT_EQ(pieces->model_token, R"("")");
}

TEST_F(ModelRewriteTest, RejectsInvalidUtf8Model) {
  const std::string body = R"({"model":"m","input":"x"})";
  RequestFacts facts;
  ASSERT_TRUE(inspector_.inspect(body, ApiKind::kEmbeddings, {}, facts));
  auto pieces = rewrite_model(body, facts, "bad\xff");
  ASSERT_FALSE(pieces);
  EXPECT_EQ(pieces.error().code, InspectErrorCode::kInvalidUtf8);
}

TEST_F(ModelRewriteTest, DetectsFactsOfAnotherBody) {
  const std::string body = R"({"model":"m","input":"x"})";
  RequestFacts facts;
  ASSERT_TRUE(inspector_.inspect(body, ApiKind::kEmbeddings, {}, facts));
  auto pieces = rewrite_model("{}", facts, "n");
  ASSERT_FALSE(pieces);
  EXPECT_EQ(pieces.error().code, InspectErrorCode::kBodyMismatch);
  pieces = rewrite_model(R"({"input":"x","model":"m"})", facts, "n");
  ASSERT_FALSE(pieces);
  EXPECT_EQ(pieces.error().code, InspectErrorCode::kBodyMismatch);
  RequestFacts empty;
  EXPECT_FALSE(rewrite_model(body, empty, "n"));
}

}  // namespace
}  // namespace rolter
