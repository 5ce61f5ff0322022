// chat_to_gemini().response() and .error(): Gemini answers and errors in OpenAI's shape.
#include "translate/gemini/gemini_translator.h"

#include "translate/gemini/gemini_test_util.h"

namespace rolter {
namespace {

using gemini_test::Expect;
using gemini_test::Json;

struct ResponseCase {
  std::string name;
  std::string model;  // TranslateOptions::model
  std::string body;
  std::vector<Expect> expects;
};

const std::vector<ResponseCase> kResponseCases = {
    {"text_and_usage_with_cached_and_thoughts",
     "gemini-2.5-flash",
     R"({"responseId":"abc","modelVersion":"gemini-2.5-flash-001","candidates":[{"index":0,
         "content":{"role":"model","parts":[{"text":"thinking...","thought":true},{"text":"Hello "},{"text":"there"}]},
         "finishReason":"STOP"}],
         "usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5,"thoughtsTokenCount":3,
           "cachedContentTokenCount":4,"totalTokenCount":18}})",
     {{"/id", R"("chatcmpl-abc")"},
      {"/object", R"("chat.completion")"},
      {"/model", R"("gemini-2.5-flash")"},
      {"/choices/0/index", "0"},
      {"/choices/0/message/role", R"("assistant")"},
      {"/choices/0/message/content", R"("Hello there")"},
      {"/choices/0/message/tool_calls", "absent"},
      {"/choices/0/finish_reason", R"("stop")"},
      {"/usage", R"({"prompt_tokens":10,"completion_tokens":8,"total_tokens":18,
         "prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":3}})"}}},
    {"model_from_model_version_and_no_usage",
     "",
     R"({"modelVersion":"gemini-x","candidates":[{"content":{"parts":[{"text":"a"}]},"finishReason":"MAX_TOKENS"}]})",
     {{"/model", R"("gemini-x")"},
      {"/id", R"("chatcmpl-gemini")"},
      {"/choices/0/finish_reason", R"("length")"},
      {"/usage", "absent"}}},
    {"function_calls_only",
     "m",
     R"({"candidates":[{"content":{"role":"model","parts":[
          {"functionCall":{"name":"weather","args":{"city":"Paris"}}},
          {"functionCall":{"id":"given-id","name":"time","args":{}}},
          {"functionCall":{"name":"noargs"}}]},"finishReason":"STOP"}],
         "usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":2,"totalTokenCount":9}})",
     {{"/choices/0/message/content", "null"},
      {"/choices/0/message/tool_calls", R"([
          {"id":"call_0_0","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}},
          {"id":"given-id","type":"function","function":{"name":"time","arguments":"{}"}},
          {"id":"call_0_2","type":"function","function":{"name":"noargs","arguments":"{}"}}])"},
      {"/choices/0/finish_reason", R"("tool_calls")"},
      {"/usage/prompt_tokens_details/cached_tokens", "0"},
      {"/usage/total_tokens", "9"}}},
    {"text_and_function_call",
     "m",
     R"({"candidates":[{"content":{"parts":[{"text":"Let me check."},
          {"functionCall":{"name":"f","args":{"a":[1,2]}}}]},"finishReason":"STOP"}]})",
     {{"/choices/0/message/content", R"("Let me check.")"},
      {"/choices/0/message/tool_calls/0/function/arguments", R"("{\"a\":[1,2]}")"},
      {"/choices/0/finish_reason", R"("tool_calls")"}}},
    {"several_candidates",
     "m",
     R"({"candidates":[
          {"index":0,"content":{"parts":[{"text":"one"}]},"finishReason":"STOP"},
          {"index":1,"content":{"parts":[{"functionCall":{"name":"g","args":{}}}]},"finishReason":"STOP"}]})",
     {{"/choices/0/message/content", R"("one")"},
      {"/choices/1/index", "1"},
      {"/choices/1/message/tool_calls/0/id", R"("call_1_0")"}}},
    {"safety_without_content",
     "m",
     R"({"candidates":[{"finishReason":"SAFETY","safetyRatings":[]}]})",
     {{"/choices/0/message/content", R"("")"},
      {"/choices/0/finish_reason", R"("content_filter")"}}},
    {"blocked_prompt",
     "m",
     R"({"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"},
         "usageMetadata":{"promptTokenCount":12,"totalTokenCount":12}})",
     {{"/choices", R"([{"index":0,"message":{"role":"assistant","content":""},"logprobs":null,
                       "finish_reason":"content_filter"}])"},
      {"/usage/prompt_tokens", "12"},
      {"/usage/completion_tokens", "0"}}},
    {"total_defaults_to_sum",
     "m",
     R"({"candidates":[{"content":{"parts":[{"text":"a"}]},"finishReason":"STOP"}],
         "usageMetadata":{"promptTokenCount":3,"toolUsePromptTokenCount":2,"candidatesTokenCount":1}})",
     {{"/usage/prompt_tokens", "5"}, {"/usage/total_tokens", "6"}}},
};

TEST(GeminiResponse, TranslatesEachField) {
  for (const auto& c : kResponseCases) {
    auto out = chat_to_gemini().response(c.body, {.model = c.model});
    ASSERT_TRUE(out.has_value()) << c.name << ": " << out.error().message;
    const Json doc = gemini_test::parse(*out);
    EXPECT_TRUE(doc["created"].is_number_integer()) << c.name;
    gemini_test::expect_fields(doc, c.expects, c.name);
  }
}

TEST(GeminiResponse, FinishReasons) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"STOP", "stop"},
      {"MAX_TOKENS", "length"},
      {"SAFETY", "content_filter"},
      {"RECITATION", "content_filter"},
      {"BLOCKLIST", "content_filter"},
      {"PROHIBITED_CONTENT", "content_filter"},
      {"SPII", "content_filter"},
      {"IMAGE_SAFETY", "content_filter"},
      {"OTHER", "stop"},
      {"LANGUAGE", "stop"},
      {"MALFORMED_FUNCTION_CALL", "stop"},
      {"FINISH_REASON_UNSPECIFIED", "stop"},
  };
  for (const auto& [gemini, openai] : cases) {
    const std::string body =
        R"({"candidates":[{"content":{"parts":[{"text":"a"}]},"finishReason":")" + gemini +
        R"("}]})";
    auto out = chat_to_gemini().response(body, {.model = "m"});
    ASSERT_TRUE(out.has_value()) << gemini;
    EXPECT_EQ(gemini_test::parse(*out)["choices"][0]["finish_reason"], openai) << gemini;
  }
}

TEST(GeminiResponse, RefusesAnswersThatMakeNoSense) {
  for (const std::string body : {"", "not json", "[]", "{}", R"({"candidates":[]})"}) {
    auto out = chat_to_gemini().response(body, {.model = "m"});
    ASSERT_FALSE(out.has_value()) << body;
    EXPECT_EQ(out.error().status, 502u) << body;
  }
}

struct ErrorCase {
  unsigned upstream_status;
  std::string body;
  unsigned status;
  std::string type;
  std::string code;  // "null" for none
  std::string message;
};

TEST(GeminiError, MapsEachClass) {
  auto gemini = [](int code, const std::string& status, const std::string& message) {
    return R"({"error":{"code":)" + std::to_string(code) + R"(,"message":")" + message +
           R"(","status":")" + status + R"("}})";
  };
  const std::vector<ErrorCase> cases = {
      {400, gemini(400, "INVALID_ARGUMENT", "Bad field"), 400, "invalid_request_error",
       "invalid_argument", "Bad field"},
      {400,
       gemini(400, "INVALID_ARGUMENT",
              "The input token count (1200000) exceeds the maximum number of tokens allowed "
              "(1048576)."),
       400, "invalid_request_error", "context_length_exceeded",
       "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."},
      {400, gemini(400, "FAILED_PRECONDITION", "No free tier here"), 400, "invalid_request_error",
       "failed_precondition", "No free tier here"},
      {401, gemini(401, "UNAUTHENTICATED", "Bad key"), 401, "authentication_error",
       "unauthenticated", "Bad key"},
      {403, gemini(403, "PERMISSION_DENIED", "No access"), 403, "permission_error",
       "permission_denied", "No access"},
      {404, gemini(404, "NOT_FOUND", "No model"), 404, "invalid_request_error", "not_found",
       "No model"},
      {429, gemini(429, "RESOURCE_EXHAUSTED", "Quota"), 429, "rate_limit_error",
       "rate_limit_exceeded", "Quota"},
      {500, gemini(500, "INTERNAL", "Oops"), 500, "api_error", "internal", "Oops"},
      {503, gemini(503, "UNAVAILABLE", "Overloaded"), 503, "service_unavailable", "unavailable",
       "Overloaded"},
      {504, gemini(504, "DEADLINE_EXCEEDED", "Slow"), 504, "timeout_error", "deadline_exceeded",
       "Slow"},
      // The status name wins over an HTTP status something in between rewrote.
      {500, gemini(429, "RESOURCE_EXHAUSTED", "Quota"), 429, "rate_limit_error",
       "rate_limit_exceeded", "Quota"},
      // The array some Gemini front ends wrap errors in.
      {400, "[" + gemini(400, "INVALID_ARGUMENT", "Wrapped") + "]", 400, "invalid_request_error",
       "invalid_argument", "Wrapped"},
      // Not JSON: the HTTP status, and the body as the message.
      {502, "<html>Bad Gateway</html>", 502, "api_error", "null", "<html>Bad Gateway</html>"},
      {503, "", 503, "service_unavailable", "null", "Gemini answered 503"},
      {418, R"({"unexpected":true})", 418, "api_error", "null", R"({"unexpected":true})"},
      // A nonsense status is still an error.
      {200, "{}", 502, "api_error", "null", "{}"},
      {400, R"({"error":{"code":400,"message":"no status name"}})", 400, "invalid_request_error",
       "null", "no status name"},
  };
  for (const auto& c : cases) {
    const TranslatedError out = chat_to_gemini().error(c.upstream_status, c.body);
    EXPECT_EQ(out.status, c.status) << c.body;
    const Json doc = gemini_test::parse(out.body);
    EXPECT_EQ(doc["error"]["type"], c.type) << c.body;
    EXPECT_EQ(doc["error"]["code"], Json::parse(c.code == "null" ? "null" : "\"" + c.code + "\""))
        << c.body;
    EXPECT_EQ(doc["error"]["message"], c.message) << c.body;
    EXPECT_TRUE(doc["error"]["param"].is_null());
  }
}

TEST(GeminiError, CutsALongRawBody) {
  const TranslatedError out = chat_to_gemini().error(500, std::string(5000, 'x'));
  EXPECT_EQ(gemini_test::parse(out.body)["error"]["message"].get<std::string>().size(), 512u);
}

}  // namespace
}  // namespace rolter
