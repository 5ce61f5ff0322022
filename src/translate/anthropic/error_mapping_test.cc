// error() of both translators: every error class and status, bodies of any shape, and a prompt
// that is too long staying recognizable.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "translate/anthropic/anthropic_translators.h"
#include "translate/anthropic/test_checks.h"

namespace rolter::anthropic {
namespace {

std::string anthropic_error(const std::string& type, const std::string& message) {
  return R"({"type":"error","error":{"type":")" + type + R"(","message":")" + message + R"("}})";
}

std::string openai_error(const std::string& type, const std::string& message,
                         const std::string& code) {
  return R"({"error":{"message":")" + message + R"(","type":")" + type +
         R"(","param":null,"code":)" + code + "}}";
}

struct Case {
  std::string name;
  const Translator* translator;
  unsigned status;
  std::string body;
  unsigned expected_status;
  std::vector<FieldCheck> checks;
};

const std::vector<Case>& cases() {
  const Translator* to_chat = &chat_to_anthropic();
  const Translator* to_messages = &anthropic_to_chat();
  auto chat_error = [](const char* type, const char* code, const char* message) {
    return std::vector<FieldCheck>{{"/error/type", type},
                                   {"/error/code", code},
                                   {"/error/message", message},
                                   {"/error/param", "null"}};
  };
  auto messages_error = [](const char* type, const char* message) {
    return std::vector<FieldCheck>{
        {"/type", R"("error")"}, {"/error/type", type}, {"/error/message", message}};
  };
  static const std::vector<Case> kCases = {
      {"InvalidRequest", to_chat, 400, anthropic_error("invalid_request_error", "bad"), 400,
       chat_error(R"("invalid_request_error")", "null", R"("bad")")},
      {"PromptTooLong", to_chat, 400,
       anthropic_error("invalid_request_error",
                       "prompt is too long: 210000 tokens > 200000 maximum"),
       400,
       chat_error(R"("invalid_request_error")", R"("context_length_exceeded")",
                  R"("prompt is too long: 210000 tokens > 200000 maximum")")},
      {"Authentication", to_chat, 401, anthropic_error("authentication_error", "invalid x-api-key"),
       401,
       chat_error(R"("authentication_error")", R"("invalid_api_key")", R"("invalid x-api-key")")},
      {"Permission", to_chat, 403, anthropic_error("permission_error", "no"), 403,
       chat_error(R"("permission_error")", "null", R"("no")")},
      {"NotFound", to_chat, 404, anthropic_error("not_found_error", "model: x"), 404,
       chat_error(R"("not_found_error")", R"("not_found")", R"("model: x")")},
      {"TooLarge", to_chat, 413, anthropic_error("request_too_large", "big"), 413,
       chat_error(R"("invalid_request_error")", R"("request_too_large")", R"("big")")},
      {"RateLimit", to_chat, 429, anthropic_error("rate_limit_error", "slow down"), 429,
       chat_error(R"("rate_limit_error")", R"("rate_limit_exceeded")", R"("slow down")")},
      {"ApiError", to_chat, 500, anthropic_error("api_error", "oops"), 500,
       chat_error(R"("server_error")", "null", R"("oops")")},
      {"Overloaded529Becomes503", to_chat, 529, anthropic_error("overloaded_error", "Overloaded"),
       503, chat_error(R"("service_unavailable")", R"("overloaded")", R"("Overloaded")")},
      {"HtmlPage", to_chat, 502, "<html>Bad Gateway</html>", 502,
       chat_error(R"("server_error")", "null", R"("<html>Bad Gateway</html>")")},
      {"EmptyBody", to_chat, 503, "", 503,
       chat_error(R"("service_unavailable")", R"("overloaded")",
                  R"("the upstream answered 503 with no body")")},
      {"SuccessStatusIsNoError", to_chat, 200, "{}", 502, {{"/error/type", R"("server_error")"}}},
      {"UnknownTypeFollowsStatus",
       to_chat,
       429,
       anthropic_error("weird_error", "w"),
       429,
       {{"/error/type", R"("rate_limit_error")"}}},

      {"OpenAiInvalidRequest", to_messages, 400,
       openai_error("invalid_request_error", "bad", "null"), 400,
       messages_error(R"("invalid_request_error")", R"("bad")")},
      {"OpenAiContextLength", to_messages, 400,
       openai_error("invalid_request_error", "too many tokens", R"("context_length_exceeded")"),
       400,
       messages_error(R"("invalid_request_error")", R"("prompt is too long: too many tokens")")},
      {"VllmContextLength", to_messages, 400,
       R"({"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.","type":"BadRequestError","param":null,"code":400})",
       400,
       messages_error(
           R"("invalid_request_error")",
           R"("prompt is too long: This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.")")},
      {"OpenAiAuth", to_messages, 401,
       openai_error("invalid_request_error", "key", R"("invalid_api_key")"), 401,
       messages_error(R"("authentication_error")", R"("key")")},
      {"OpenAiForbidden", to_messages, 403, openai_error("x", "no", "null"), 403,
       messages_error(R"("permission_error")", R"("no")")},
      {"FastApiNotFound", to_messages, 404, R"({"detail":"Not Found"})", 404,
       messages_error(R"("not_found_error")", R"("Not Found")")},
      {"OpenAiTooLarge", to_messages, 413, "", 413,
       messages_error(R"("request_too_large")", R"("the upstream answered 413 with no body")")},
      {"OpenAiRateLimit", to_messages, 429,
       openai_error("requests", "slow", R"("rate_limit_exceeded")"), 429,
       messages_error(R"("rate_limit_error")", R"("slow")")},
      {"OpenAiServerError", to_messages, 500, openai_error("server_error", "boom", "null"), 500,
       messages_error(R"("api_error")", R"("boom")")},
      {"OpenAiUnavailable", to_messages, 503, "upstream connect error", 503,
       messages_error(R"("overloaded_error")", R"("upstream connect error")")},
      {"OpenAiTimeout", to_messages, 504, "", 504,
       messages_error(R"("timeout_error")", R"("the upstream answered 504 with no body")")},
      {"OpenAiBadStatus", to_messages, 302, "moved", 502,
       messages_error(R"("api_error")", R"("moved")")},
  };
  return kCases;
}

TEST(ErrorMapping, Table) {
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    const TranslatedError error = c.translator->error(c.status, c.body);
    EXPECT_EQ(error.status, c.expected_status);
    expect_fields(parse_or_fail(error.body, c.name), c.checks, c.name);
  }
}

TEST(ErrorMapping, LongOrInvalidBodiesStayValidJson) {
  const std::string huge(100000, 'x');
  const std::string bad_utf8 = "\xff\xfe broken \xc3";
  for (const Translator* t : {&chat_to_anthropic(), &anthropic_to_chat()}) {
    for (const std::string& body : {huge, bad_utf8}) {
      const TranslatedError error = t->error(500, body);
      const auto doc = parse_or_fail(error.body, "error body");
      EXPECT_LT(error.body.size(), 1024u);
      EXPECT_FALSE(doc.is_discarded());
    }
  }
}

}  // namespace
}  // namespace rolter::anthropic
