#include "inspect/request_inspector.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/hash.h"

namespace rolter {
namespace {

using ::testing::TestWithParam;

class RequestInspectorTest : public ::testing::Test {
 protected:
  // Inspects through the copying path (no padding known).
  tl::expected<void, InspectError> inspect(std::string_view body, ApiKind kind,
                                           InspectHeaders headers = {}) {
    return inspector_.inspect(body, kind, headers, facts_);
  }
  // Inspects `body` and returns its digest, failing the test if it is not read as a conversation.
  uint64_t digest(std::string_view body, ApiKind kind) {
    auto ok = inspect(body, kind);
    EXPECT_TRUE(ok) << (ok ? "" : ok.error().message) << " for " << body;
    EXPECT_TRUE(facts_.conversation_read) << body;
    return facts_.prompt_digest;
  }
  InspectErrorCode error_of(std::string_view body, ApiKind kind = ApiKind::kChatCompletions) {
    auto ok = inspect(body, kind);
    EXPECT_FALSE(ok) << "accepted: " << body.substr(0, 200);
    if (ok) return InspectErrorCode::kInternal;
    EXPECT_FALSE(ok.error().message.empty());
    return ok.error().code;
  }

  RequestInspector inspector_;
  RequestFacts facts_;
};

// ---- model, stream, body hash

TEST_F(RequestInspectorTest, ReadsModelTokenAndStream) {
  const std::string body =
      R"({ "stream" : true, "model" :  "gpt-4o"  , "messages": [{"role":"user","content":"hi"}]})";
  ASSERT_TRUE(inspect(body, ApiKind::kChatCompletions));
  EXPECT_EQ(facts_.model, "gpt-4o");
  EXPECT_EQ(body.substr(facts_.model_token_offset, facts_.model_token_length), "\"gpt-4o\"");
  EXPECT_TRUE(facts_.stream);
  EXPECT_EQ(facts_.body_hash, hash64(body));
  EXPECT_EQ(facts_.kind, ApiKind::kChatCompletions);
}

TEST_F(RequestInspectorTest, EscapedModelIsUnescapedButTokenIsRaw) {
  const std::string body = R"({"model":"a\"b\u00e9\/c","messages":[]})";
  ASSERT_TRUE(inspect(body, ApiKind::kChatCompletions));
  EXPECT_EQ(facts_.model, "a\"b\xc3\xa9/c");
  EXPECT_EQ(body.substr(facts_.model_token_offset, facts_.model_token_length),
            R"("a\"b\u00e9\/c")");
}

TEST_F(RequestInspectorTest, StreamDefaultsToFalseAndAcceptsNull) {
  ASSERT_TRUE(inspect(R"({"model":"m","messages":[]})", ApiKind::kChatCompletions));
  EXPECT_FALSE(facts_.stream);
  ASSERT_TRUE(inspect(R"({"model":"m","stream":null,"messages":[]})", ApiKind::kChatCompletions));
  EXPECT_FALSE(facts_.stream);
  ASSERT_TRUE(inspect(R"({"model":"m","stream":false,"messages":[]})", ApiKind::kChatCompletions));
  EXPECT_FALSE(facts_.stream);
  EXPECT_EQ(error_of(R"({"model":"m","stream":"yes","messages":[]})"),
            InspectErrorCode::kBadStream);
}

TEST_F(RequestInspectorTest, ReadsOutputCapAndStreamUsage) {
  struct Case {
    std::string body;
    std::optional<uint64_t> cap;
    bool stream_usage;
  };
  const Case cases[] = {
      {R"({"model":"m","messages":[],"max_tokens":256})", 256, false},
      {R"({"model":"m","messages":[],"max_completion_tokens": 77 })", 77, false},
      {R"({"model":"m","input":"x","max_output_tokens":12})", 12, false},
      {R"({"model":"m","messages":[],"max_tokens":1.5})", std::nullopt, false},
      {R"({"model":"m","messages":[],"max_tokens":-3})", std::nullopt, false},
      {R"({"model":"m","messages":[],"max_tokens":null})", std::nullopt, false},
      {R"({"model":"m","messages":[{"role":"user","content":"\"max_tokens\":9"}]})", std::nullopt,
       false},
      {R"({"model":"m","messages":[],"stream":true,"stream_options":{"include_usage":true}})",
       std::nullopt, true},
      {R"({"model":"m","messages":[],"stream":true,"stream_options":{"include_usage":false,"x":[1]}})",
       std::nullopt, false},
      {R"({"model":"m","messages":[],"stream":true,"stream_options":null})", std::nullopt, false},
  };
  for (const auto& c : cases) {
    ASSERT_TRUE(inspect(c.body, c.body.find("\"input\"") != std::string::npos
                                    ? ApiKind::kResponses
                                    : ApiKind::kChatCompletions))
        << c.body;
    EXPECT_EQ(facts_.output_cap, c.cap) << c.body;
    EXPECT_EQ(facts_.stream_usage, c.stream_usage) << c.body;
  }
  // Values inside stream_options are still validated.
  EXPECT_EQ(error_of(R"({"model":"m","messages":[],"stream_options":{"x":[1,,2]}})"),
            InspectErrorCode::kInvalidJson);
}

TEST_F(RequestInspectorTest, MissingModelIsAnError) {
  EXPECT_EQ(error_of(R"({"messages":[{"role":"user","content":"hi"}]})"),
            InspectErrorCode::kMissingModel);
  EXPECT_EQ(error_of(R"({"model":"","messages":[]})"), InspectErrorCode::kMissingModel);
}

TEST_F(RequestInspectorTest, NonStringModelIsAnError) {
  EXPECT_EQ(error_of(R"({"model":42,"messages":[]})"), InspectErrorCode::kModelNotString);
  EXPECT_EQ(error_of(R"({"model":null,"messages":[]})"), InspectErrorCode::kModelNotString);
  EXPECT_EQ(error_of(R"({"model":["a"],"messages":[]})"), InspectErrorCode::kModelNotString);
  EXPECT_EQ(error_of(R"({"model":{"name":"a"},"messages":[]})"), InspectErrorCode::kModelNotString);
}

TEST_F(RequestInspectorTest, DuplicateModelIsAnError) {
  EXPECT_EQ(error_of(R"({"model":"a","messages":[],"model":"b"})"),
            InspectErrorCode::kDuplicateModel);
  // Escaped key spelling is the same key to every JSON parser.
  EXPECT_EQ(error_of(R"({"model":"a","messages":[],"mod\u0065l":"b"})"),
            InspectErrorCode::kDuplicateModel);
}

TEST_F(RequestInspectorTest, NonObjectBodyIsAnError) {
  EXPECT_EQ(error_of(R"([{"model":"m"}])"), InspectErrorCode::kNotAnObject);
  EXPECT_EQ(error_of(R"("model")"), InspectErrorCode::kNotAnObject);
  EXPECT_EQ(error_of("42"), InspectErrorCode::kNotAnObject);
  EXPECT_EQ(error_of("null"), InspectErrorCode::kNotAnObject);
  EXPECT_EQ(error_of("true"), InspectErrorCode::kNotAnObject);
}

// ---- invalid JSON

class InvalidJsonTest : public TestWithParam<std::string> {};

TEST_P(InvalidJsonTest, IsRejectedAsInvalidJson) {
  const std::string& body = GetParam();
  // The oracle agrees these are not JSON.
  ASSERT_FALSE(nlohmann::json::accept(body)) << body;
  RequestInspector inspector;
  RequestFacts facts;
  for (const ApiKind kind : {ApiKind::kChatCompletions, ApiKind::kCompletions, ApiKind::kEmbeddings,
                             ApiKind::kResponses, ApiKind::kMessages}) {
    auto ok = inspector.inspect(body, kind, {}, facts);
    ASSERT_FALSE(ok) << body;
    EXPECT_EQ(ok.error().code, InspectErrorCode::kInvalidJson)
        << body << ": " << ok.error().message;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Malformed, InvalidJsonTest,
    ::testing::Values(
        "", "   ", "{", "}", R"({"model":"m")", R"({"model":"m",})", R"({"model" "m"})",
        R"({"model":"m" "messages":[]})", R"({"model":"m","messages":[}])",
        R"({"model":"m","messages":[1,,2]})", R"({"model":"m","messages":[1,2,]})",
        R"({"model":"m","x":[{"a":1,}]})", R"({"model":"m","x":{"a" 1}})",
        R"({"model":"m","x":tru})", R"({"model":"m","x":nul})", R"({"model":"m","x":fals})",
        R"({"model":"m","x":truex})", R"({"model":"m","x":01})", R"({"model":"m","x":1.})",
        R"({"model":"m","x":-})", R"({"model":"m","x":+1})", R"({"model":"m","x":1e})",
        R"({"model":"m","x":1e+})", R"({"model":"m","x":-01})", R"({"model":"m","x":.5})",
        R"({"model":"m","x":1.5e400.1})", R"({"model":"m","x":12345678901234567890123x})",
        R"({"model":"m","x":"\x"})", R"({"model":"m","x":"\u12"})", R"({"model":"m","x":"a)",
        "{\"model\":\"m\",\"x\":\"a\nb\"}", R"({"model":"m","x":'a'})", R"({"model":"m",x:1})",
        R"({"model":"m","x":NaN})", R"({"model":"m","x":[1 2]})",
        R"({"model":"m","x":{"a":1}"b":2})", R"({"model":"m","x":{,}})", R"({"model":"m","x":[,]})",
        R"({"model":"m"]})", R"({"model":"m","x":[[]})", R"({"model":"m","x":{"a":[1}})",
        R"({1:2})", R"({"model":"m"}})", R"({"model":"m"} x)", R"({"model":"m"} {})",
        R"({"model":"m"}[])", R"({"model":"m"} "s")", R"({"model":"m"} 1)",
        R"({"model":"m","x":{"f":"42":"f"}}})", R"({"model":"m","x":[{"t":[{"f":"42":"f"}}]}]})",
        R"({"model":"m","x":"a":"b"})",
        R"({"model":"m","messages":[{"role":"user","content":"a":"b"}}]})",
        R"({"model":"m","x":"\ud800"})", R"([1,2)", R"([1,2]])", R"("a" "b")", "1 2", "nul",
        "[1,,2]"));

TEST_F(RequestInspectorTest, TrailingGarbageIsInvalidJson) {
  auto ok = inspect(R"({"model":"m","messages":[]} garbage)", ApiKind::kChatCompletions);
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code, InspectErrorCode::kInvalidJson);
  EXPECT_NE(ok.error().message.find("after the JSON value"), std::string::npos)
      << ok.error().message;
  for (const char* body : {R"({"model":"m","messages":[]}})", R"({"model":"m","messages":[]},)",
                           R"({"model":"m","messages":[]}[])", "{\"model\":\"m\"}\x01"}) {
    EXPECT_EQ(error_of(body), InspectErrorCode::kInvalidJson) << body;
  }
  // Trailing whitespace is fine.
  EXPECT_TRUE(inspect("{\"model\":\"m\",\"messages\":[]} \r\n\t ", ApiKind::kChatCompletions));
}

TEST_F(RequestInspectorTest, InvalidJsonWinsOverShapeErrors) {
  // A non-string model and a syntax error later in the body: the syntax error is reported.
  EXPECT_EQ(error_of(R"({"model":1,"messages":[1,]})"), InspectErrorCode::kInvalidJson);
}

TEST_F(RequestInspectorTest, ValidJsonEdgeCasesAreAccepted) {
  const std::string body =
      R"({"model":"m","messages":[],"a":[[],{},"",0,-0,1e5,1E+5,-1.5e-7,true,false,null],)"
      R"("b":"\"\\\/\b\f\n\r\t\u0000\ud83d\ude00","":{}})";
  ASSERT_TRUE(nlohmann::json::accept(body));
  EXPECT_TRUE(inspect(body, ApiKind::kChatCompletions)) << body;
  // Beyond double and 64-bit range is still JSON (RFC 8259 §6 leaves the range to the reader;
  // the upstream decides what it accepts).
  const char* big_integer = R"({"model":"m","seed":123456789012345678901234567890})";
  ASSERT_TRUE(nlohmann::json::accept(big_integer));
  EXPECT_TRUE(inspect(big_integer, ApiKind::kChatCompletions));
  EXPECT_TRUE(
      inspect(R"({"model":"m","x":[1e400,-1E+400,1e-400,-0.0e0]})", ApiKind::kChatCompletions));
}

// ---- bad input that must not crash

std::string nested(size_t depth) {
  std::string body = R"({"model":"m","messages":[],"x":)";
  body.append(depth, '[');
  body.append(depth, ']');
  body += "}";
  return body;
}

TEST_F(RequestInspectorTest, DeepNestingIsRejected) {
  EXPECT_EQ(error_of(nested(10000)), InspectErrorCode::kTooDeep);
  // Unbalanced, too: the depth check fires before the missing brackets matter.
  EXPECT_NE(error_of(std::string(R"({"model":"m","x":)") + std::string(100000, '[')),
            InspectErrorCode::kInternal);
  std::string objects = R"({"model":"m","x":)";
  for (int i = 0; i < 5000; ++i) objects += R"({"a":)";
  objects += "1";
  objects.append(5000, '}');
  objects += "}";
  EXPECT_EQ(error_of(objects), InspectErrorCode::kTooDeep);
  // Inside the conversation itself.
  std::string content = R"({"model":"m","messages":[{"role":"user","content":)";
  content.append(3000, '[');
  content.append(3000, ']');
  content += "}]}";
  EXPECT_EQ(error_of(content), InspectErrorCode::kTooDeep);
}

TEST_F(RequestInspectorTest, NestingUpToTheLimitIsAccepted) {
  // The root object is level 1 and "x" is level 2.
  EXPECT_TRUE(inspect(nested(RequestInspector::kMaxDepth - 1), ApiKind::kChatCompletions));
  EXPECT_EQ(error_of(nested(RequestInspector::kMaxDepth)), InspectErrorCode::kTooDeep);
}

TEST_F(RequestInspectorTest, InvalidUtf8IsRejected) {
  EXPECT_EQ(error_of("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"a\xff\"}]}"),
            InspectErrorCode::kInvalidUtf8);
  EXPECT_EQ(error_of("{\"model\":\"m\xc3\",\"messages\":[]}"), InspectErrorCode::kInvalidUtf8);
  EXPECT_EQ(error_of("{\"model\":\"m\",\"k\xed\xa0\x80\":1,\"messages\":[]}"),
            InspectErrorCode::kInvalidUtf8);  // an encoded surrogate
  EXPECT_EQ(error_of("{\"model\":\"m\",\"x\":\"\xc0\xaf\",\"messages\":[]}"),
            InspectErrorCode::kInvalidUtf8);  // overlong '/'
  EXPECT_TRUE(inspect("{\"model\":\"m\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\",\"messages\":[]}",
                      ApiKind::kChatCompletions));
}

// ---- header facts

TEST_F(RequestInspectorTest, SessionAndTokenIdHeaders) {
  InspectHeaders headers;
  headers.session_id = "sess-1";
  headers.vllm_token_ids = "1, 2,3";
  ASSERT_TRUE(inspect(R"({"model":"m","messages":[]})", ApiKind::kChatCompletions, headers));
  EXPECT_EQ(facts_.session_key, "sess-1");
  EXPECT_TRUE(facts_.has_token_ids);
  EXPECT_EQ(facts_.token_ids, (std::vector<uint32_t>{1, 2, 3}));

  headers.vllm_token_ids = "1,,2";
  auto ok = inspect(R"({"model":"m","messages":[]})", ApiKind::kChatCompletions, headers);
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code, InspectErrorCode::kBadTokenIds);
  headers.vllm_token_ids = "";
  ok = inspect(R"({"model":"m","messages":[]})", ApiKind::kChatCompletions, headers);
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code, InspectErrorCode::kBadTokenIds);
}

TEST_F(RequestInspectorTest, BuildRouteContextViewsTheFacts) {
  InspectHeaders headers;
  headers.session_id = "s";
  headers.vllm_token_ids = "7,8";
  ASSERT_TRUE(inspect(R"({"model":"m","messages":[{"role":"user","content":"hello"}]})",
                      ApiKind::kChatCompletions, headers));
  const RouteContext ctx = build_route_context(facts_);
  EXPECT_EQ(ctx.session_key, "s");
  EXPECT_EQ(ctx.session_key.data(), facts_.session_key.data());
  EXPECT_EQ(ctx.prompt, "hello");
  EXPECT_EQ(ctx.prompt.data(), facts_.prompt.data());
  EXPECT_EQ(ctx.prompt_len, 5u);
  EXPECT_EQ(ctx.prompt_digest, facts_.prompt_digest);
  EXPECT_EQ(ctx.body_hash, facts_.body_hash);
  ASSERT_TRUE(ctx.token_ids.has_value());
  ASSERT_EQ(ctx.token_ids->size(), 2u);
  EXPECT_EQ((*ctx.token_ids)[1], 8u);
  EXPECT_TRUE(ctx.adapter.empty());

  ASSERT_TRUE(inspect(R"({"model":"m","messages":[]})", ApiKind::kChatCompletions));
  EXPECT_FALSE(build_route_context(facts_).token_ids.has_value());
}

// ---- chat completions

TEST_F(RequestInspectorTest, ChatPromptIsMessageContentsInOrder) {
  ASSERT_TRUE(inspect(R"({"model":"m","messages":[
      {"role":"system","content":"Be brief."},
      {"content":[{"type":"text","text":"What is"},{"type":"image_url","image_url":{"url":"u"}},
                  {"text":"this?","type":"text"}],"role":"user"},
      {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",
        "function":{"name":"f","arguments":"{}"}}]},
      {"role":"tool","tool_call_id":"c1","content":"42"}]})",
                      ApiKind::kChatCompletions));
  EXPECT_TRUE(facts_.conversation_read);
  EXPECT_EQ(facts_.prompt,
            "Be brief.\x1eWhat is\x1fthis?\x1e\x1e"
            "42");
  EXPECT_EQ(facts_.prompt_len, facts_.prompt.size());
  EXPECT_NE(facts_.prompt_digest, facts_.body_hash);
}

TEST_F(RequestInspectorTest, MessageBoundariesMatter) {
  const uint64_t ab_c = digest(
      R"({"model":"m","messages":[{"role":"user","content":"ab"},{"role":"user","content":"c"}]})",
      ApiKind::kChatCompletions);
  const std::string prompt_ab_c = facts_.prompt;
  const uint64_t a_bc = digest(
      R"({"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","content":"bc"}]})",
      ApiKind::kChatCompletions);
  EXPECT_NE(ab_c, a_bc);
  EXPECT_NE(prompt_ab_c, facts_.prompt);
}

TEST_F(RequestInspectorTest, IdenticalConversationsHaveEqualDigests) {
  // Other fields, the model, whitespace and key order do not change the conversation.
  const uint64_t a =
      digest(R"({"model":"a","temperature":0.2,"messages":[{"role":"user","content":"hi"}]})",
             ApiKind::kChatCompletions);
  const uint64_t b =
      digest(R"({ "messages" : [ { "content" : "hi", "role" : "user" } ], "model" : "b", "n": 3 })",
             ApiKind::kChatCompletions);
  EXPECT_EQ(a, b);
}

TEST_F(RequestInspectorTest, ChatDigestCoversImagesAndTools) {
  auto chat = [](std::string_view image, std::string_view call_id, std::string_view name,
                 std::string_view arguments, std::string_view result_id) {
    std::string body = R"({"model":"m","messages":[{"role":"user","content":[)";
    body += R"({"type":"text","text":"look"},{"type":"image_url","image_url":{"url":")";
    body += image;
    body += R"("}}]},{"role":"assistant","tool_calls":[{"id":")";
    body += call_id;
    body += R"(","type":"function","function":{"name":")";
    body += name;
    body += R"(","arguments":")";
    body += arguments;
    body += R"("}}]},{"role":"tool","tool_call_id":")";
    body += result_id;
    body += R"(","content":"ok"}]})";
    return body;
  };
  const uint64_t base =
      digest(chat("https://x/1.png", "c1", "f", "{}", "c1"), ApiKind::kChatCompletions);
  const std::string base_prompt = facts_.prompt;
  EXPECT_EQ(base,
            digest(chat("https://x/1.png", "c1", "f", "{}", "c1"), ApiKind::kChatCompletions));
  EXPECT_NE(base,
            digest(chat("https://x/2.png", "c1", "f", "{}", "c1"), ApiKind::kChatCompletions));
  EXPECT_EQ(base_prompt, facts_.prompt);  // images are not text
  EXPECT_NE(base, digest(chat("data:image/png;base64,AAAA", "c1", "f", "{}", "c1"),
                         ApiKind::kChatCompletions));
  EXPECT_NE(base,
            digest(chat("https://x/1.png", "c2", "f", "{}", "c1"), ApiKind::kChatCompletions));
  EXPECT_NE(base,
            digest(chat("https://x/1.png", "c1", "g", "{}", "c1"), ApiKind::kChatCompletions));
  EXPECT_NE(base, digest(chat("https://x/1.png", "c1", "f", "{\\\"a\\\":1}", "c1"),
                         ApiKind::kChatCompletions));
  EXPECT_NE(base,
            digest(chat("https://x/1.png", "c1", "f", "{}", "c2"), ApiKind::kChatCompletions));
  EXPECT_EQ(base_prompt, facts_.prompt);
}

TEST_F(RequestInspectorTest, ChatDigestCoversUnknownPartsAndRoles) {
  const uint64_t audio1 =
      digest(R"({"model":"m","messages":[{"role":"user","content":[{"type":"input_audio",)"
             R"("input_audio":{"data":"AAAA","format":"wav"}},{"type":"text","text":"t"}]}]})",
             ApiKind::kChatCompletions);
  EXPECT_EQ(facts_.prompt, "t");
  const uint64_t audio2 =
      digest(R"({"model":"m","messages":[{"role":"user","content":[{"type":"input_audio",)"
             R"("input_audio":{"data":"BBBB","format":"wav"}},{"type":"text","text":"t"}]}]})",
             ApiKind::kChatCompletions);
  EXPECT_EQ(facts_.prompt, "t");
  EXPECT_NE(audio1, audio2);
  // The data sits before "type": the whole part is still its identity.
  const uint64_t before1 =
      digest(R"({"model":"m","messages":[{"role":"user","content":[{"file":{"file_data":"AA"},)"
             R"("type":"file"}]}]})",
             ApiKind::kChatCompletions);
  const uint64_t before2 =
      digest(R"({"model":"m","messages":[{"role":"user","content":[{"file":{"file_data":"BB"},)"
             R"("type":"file"}]}]})",
             ApiKind::kChatCompletions);
  EXPECT_NE(before1, before2);
  EXPECT_NE(digest(R"({"model":"m","messages":[{"role":"user","content":"x"}]})",
                   ApiKind::kChatCompletions),
            digest(R"({"model":"m","messages":[{"role":"system","content":"x"}]})",
                   ApiKind::kChatCompletions));
}

TEST_F(RequestInspectorTest, PromptIsBoundedButLengthIsWhole) {
  const std::string big(100 * 1024, 'x');
  const std::string body = R"({"model":"m","messages":[{"role":"system","content":"sys"},)"
                           R"({"role":"user","content":")" +
                           big + R"("}]})";
  ASSERT_TRUE(inspect(body, ApiKind::kChatCompletions));
  EXPECT_EQ(facts_.prompt.size(), RouteContext::kPromptBound);
  EXPECT_EQ(facts_.prompt_len, 3 + 1 + big.size());
  EXPECT_EQ(facts_.prompt.substr(0, 4), "sys\x1e");
  EXPECT_EQ(facts_.prompt.substr(4), big.substr(0, RouteContext::kPromptBound - 4));
  // Whatever lies past the bound still changes the digest.
  std::string other = body;
  other[other.size() - 10] = 'y';
  const uint64_t first = facts_.prompt_digest;
  ASSERT_TRUE(inspect(other, ApiKind::kChatCompletions));
  EXPECT_NE(first, facts_.prompt_digest);
}

TEST_F(RequestInspectorTest, UnexpectedShapeDigestsTheRawBody) {
  const char* bodies[] = {
      R"({"model":"m","messages":"hello"})",
      R"({"model":"m"})",
      R"({"model":"m","messages":[{"role":"user","content":42}]})",
      R"({"model":"m","messages":[["not","an","object"]]})",
      R"({"model":"m","messages":[{"role":"user","content":[{"type":"text","text":7}]}]})",
      R"({"model":"m","messages":[{"role":"user","content":[{"type":"image_url"}]}]})",
      R"({"model":"m","messages":[{"role":5,"content":"x"}]})",
      R"({"model":"m","messages":[{"role":"assistant","tool_calls":{}}]})",
  };
  for (const char* body : bodies) {
    ASSERT_TRUE(inspect(body, ApiKind::kChatCompletions)) << body;
    EXPECT_FALSE(facts_.conversation_read) << body;
    EXPECT_TRUE(facts_.prompt.empty()) << body;
    EXPECT_EQ(facts_.prompt_len, 0u) << body;
    EXPECT_EQ(facts_.prompt_digest, hash64(body)) << body;
    EXPECT_EQ(facts_.prompt_digest, facts_.body_hash) << body;
    EXPECT_EQ(facts_.model, "m");
  }
}

// ---- completions

TEST_F(RequestInspectorTest, CompletionsPromptText) {
  ASSERT_TRUE(inspect(R"({"model":"m","prompt":"Once upon"})", ApiKind::kCompletions));
  EXPECT_EQ(facts_.prompt, "Once upon");
  EXPECT_FALSE(facts_.has_token_ids);
  ASSERT_TRUE(inspect(R"({"model":"m","prompt":["a","b"]})", ApiKind::kCompletions));
  EXPECT_EQ(facts_.prompt,
            "a\x1e"
            "b");
  EXPECT_EQ(facts_.prompt_len, 3u);
}

TEST_F(RequestInspectorTest, CompletionsTokenArrayPrompt) {
  ASSERT_TRUE(inspect(R"({"model":"m","prompt":[1, 2, 4294967295]})", ApiKind::kCompletions));
  EXPECT_TRUE(facts_.conversation_read);
  EXPECT_TRUE(facts_.has_token_ids);
  EXPECT_EQ(facts_.token_ids, (std::vector<uint32_t>{1, 2, 4294967295u}));
  EXPECT_TRUE(facts_.prompt.empty());
  const uint64_t tokens_digest = facts_.prompt_digest;
  ASSERT_TRUE(inspect(R"({"model":"m","prompt":[1, 2, 3]})", ApiKind::kCompletions));
  EXPECT_NE(tokens_digest, facts_.prompt_digest);

  // Out of the uint32 range, negative or fractional: not a token prompt this gateway can use.
  for (const char* body :
       {R"({"model":"m","prompt":[1, 4294967296]})", R"({"model":"m","prompt":[-1]})",
        R"({"model":"m","prompt":[1.5]})", R"({"model":"m","prompt":[1,"a"]})"}) {
    ASSERT_TRUE(inspect(body, ApiKind::kCompletions)) << body;
    EXPECT_FALSE(facts_.conversation_read) << body;
    EXPECT_FALSE(facts_.has_token_ids) << body;
    EXPECT_EQ(facts_.prompt_digest, facts_.body_hash);
  }
}

TEST_F(RequestInspectorTest, TokenIdHeaderWinsOverTokenPrompt) {
  InspectHeaders headers;
  headers.vllm_token_ids = "9";
  ASSERT_TRUE(inspect(R"({"model":"m","prompt":[1,2]})", ApiKind::kCompletions, headers));
  EXPECT_EQ(facts_.token_ids, std::vector<uint32_t>{9});
  const uint64_t with_header = facts_.prompt_digest;
  ASSERT_TRUE(inspect(R"({"model":"m","prompt":[1,2]})", ApiKind::kCompletions));
  EXPECT_EQ(facts_.token_ids, (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(with_header, facts_.prompt_digest);  // the digest is of the body's prompt
}

TEST_F(RequestInspectorTest, TokenPromptOnlyForCompletions) {
  ASSERT_TRUE(inspect(R"({"model":"m","input":[1,2]})", ApiKind::kEmbeddings));
  EXPECT_TRUE(facts_.conversation_read);
  EXPECT_FALSE(facts_.has_token_ids);
}

// ---- embeddings

TEST_F(RequestInspectorTest, EmbeddingsInput) {
  ASSERT_TRUE(inspect(R"({"model":"m","input":"embed me"})", ApiKind::kEmbeddings));
  EXPECT_EQ(facts_.prompt, "embed me");
  ASSERT_TRUE(inspect(R"({"input":["x","yz"],"model":"m"})", ApiKind::kEmbeddings));
  EXPECT_EQ(facts_.prompt, "x\x1eyz");
  EXPECT_EQ(facts_.prompt_len, 4u);
  ASSERT_TRUE(inspect(R"({"model":"m","input":{"text":"x"}})", ApiKind::kEmbeddings));
  EXPECT_FALSE(facts_.conversation_read);
}

// ---- responses

TEST_F(RequestInspectorTest, ResponsesInput) {
  ASSERT_TRUE(inspect(R"({"model":"m","input":"Tell me a joke"})", ApiKind::kResponses));
  EXPECT_EQ(facts_.prompt, "Tell me a joke");

  ASSERT_TRUE(inspect(R"({"model":"m","input":[
      {"role":"developer","content":"Be kind."},
      {"type":"message","role":"user","content":[{"type":"input_text","text":"Describe"},
        {"type":"input_image","image_url":"https://x/cat.png"}]},
      {"type":"message","role":"assistant","content":[{"type":"output_text","text":"A cat."}]},
      {"type":"function_call","call_id":"call_1","name":"lookup","arguments":"{}"},
      {"type":"function_call_output","call_id":"call_1","output":"found"}]})",
                      ApiKind::kResponses));
  EXPECT_TRUE(facts_.conversation_read);
  EXPECT_EQ(facts_.prompt,
            "Be kind.\x1e"
            "Describe\x1e"
            "A cat.\x1e\x1e"
            "found");
}

TEST_F(RequestInspectorTest, ResponsesDigestCoversImagesCallsAndInstructions) {
  auto body = [](std::string_view image, std::string_view call, std::string_view extra) {
    std::string b = R"({"model":"m",)";
    b += extra;
    b += R"("input":[{"role":"user","content":[{"type":"input_text","text":"hi"},)"
         R"({"type":"input_image","image_url":")";
    b += image;
    b += R"("}]},{"type":"function_call","call_id":"c","name":"f","arguments":")";
    b += call;
    b += R"("}]})";
    return b;
  };
  const uint64_t base = digest(body("u1", "{}", ""), ApiKind::kResponses);
  EXPECT_EQ(base, digest(body("u1", "{}", ""), ApiKind::kResponses));
  EXPECT_NE(base, digest(body("u2", "{}", ""), ApiKind::kResponses));
  EXPECT_NE(base, digest(body("u1", "[]", ""), ApiKind::kResponses));
  EXPECT_NE(base, digest(body("u1", "{}", R"("instructions":"x",)"), ApiKind::kResponses));
  EXPECT_NE(base, digest(body("u1", "{}", R"("previous_response_id":"r1",)"), ApiKind::kResponses));
}

// ---- messages (Anthropic)

TEST_F(RequestInspectorTest, MessagesSystemComesFirstWherever) {
  ASSERT_TRUE(inspect(R"({"model":"claude","messages":[{"role":"user","content":"Hi"}],)"
                      R"("system":"You are terse.","max_tokens":10})",
                      ApiKind::kMessages));
  EXPECT_EQ(facts_.prompt, "You are terse.\x1eHi");
  ASSERT_TRUE(inspect(R"({"model":"claude","system":[{"type":"text","text":"A"},)"
                      R"({"type":"text","text":"B","cache_control":{"type":"ephemeral"}}],)"
                      R"("messages":[{"role":"user","content":[{"type":"text","text":"Hi"}]}]})",
                      ApiKind::kMessages));
  EXPECT_EQ(facts_.prompt,
            "A\x1f"
            "B\x1eHi");
  ASSERT_TRUE(inspect(R"({"model":"claude","messages":[{"role":"user","content":"Hi"}]})",
                      ApiKind::kMessages));
  EXPECT_EQ(facts_.prompt, "Hi");
}

TEST_F(RequestInspectorTest, MessagesBlocks) {
  ASSERT_TRUE(inspect(R"({"model":"c","messages":[
      {"role":"user","content":[{"type":"image","source":{"type":"base64",
        "media_type":"image/png","data":"iVBOR"}},{"type":"text","text":"What?"}]},
      {"role":"assistant","content":[{"type":"text","text":"Let me check."},
        {"type":"tool_use","id":"tu1","name":"search","input":{"q":"cat"}}]},
      {"role":"user","content":[{"type":"tool_result","tool_use_id":"tu1",
        "content":[{"type":"text","text":"a cat"}]}]}]})",
                      ApiKind::kMessages));
  EXPECT_TRUE(facts_.conversation_read);
  EXPECT_EQ(facts_.prompt,
            "What?\x1eLet me check.\x1e"
            "a cat");
}

TEST_F(RequestInspectorTest, MessagesDigestCoversImagesToolUseAndResults) {
  auto body = [](std::string_view source, std::string_view input, std::string_view result_id) {
    std::string b = R"({"model":"c","messages":[{"role":"user","content":[)"
                    R"({"type":"image","source":)";
    b += source;
    b += R"(},{"type":"text","text":"q"}]},{"role":"assistant","content":[)"
         R"({"type":"tool_use","id":"t1","name":"s","input":)";
    b += input;
    b += R"(}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":")";
    b += result_id;
    b += R"(","content":"r"}]}]})";
    return b;
  };
  const std::string b64 = R"({"type":"base64","media_type":"image/png","data":"AAAA"})";
  const uint64_t base = digest(body(b64, R"({"q":1})", "t1"), ApiKind::kMessages);
  EXPECT_EQ(base, digest(body(b64, R"({"q":1})", "t1"), ApiKind::kMessages));
  EXPECT_NE(base, digest(body(R"({"type":"base64","media_type":"image/png","data":"AAAB"})",
                              R"({"q":1})", "t1"),
                         ApiKind::kMessages));
  EXPECT_NE(base, digest(body(R"({"type":"url","url":"https://x/a.png"})", R"({"q":1})", "t1"),
                         ApiKind::kMessages));
  EXPECT_NE(base, digest(body(b64, R"({"q":2})", "t1"), ApiKind::kMessages));
  EXPECT_NE(base, digest(body(b64, R"({"q":1})", "t2"), ApiKind::kMessages));
}

// ---- buffers

TEST_F(RequestInspectorTest, PaddedAndCopiedPathsAgree) {
  const std::string body =
      R"({"model":"m","messages":[{"role":"user","content":"hello"}],"stream":true})";
  std::string padded = body;
  padded.resize(body.size() + RequestInspector::kPadding, ' ');
  RequestFacts in_place;
  ASSERT_TRUE(inspector_.inspect(padded.data(), body.size(), padded.size(),
                                 ApiKind::kChatCompletions, {}, in_place));
  RequestFacts copied;
  ASSERT_TRUE(inspector_.inspect(body.data(), body.size(), body.size(), ApiKind::kChatCompletions,
                                 {}, copied));
  EXPECT_EQ(in_place.model, copied.model);
  EXPECT_EQ(in_place.model_token_offset, copied.model_token_offset);
  EXPECT_EQ(in_place.model_token_length, copied.model_token_length);
  EXPECT_EQ(in_place.prompt, copied.prompt);
  EXPECT_EQ(in_place.prompt_digest, copied.prompt_digest);
  EXPECT_EQ(in_place.body_hash, copied.body_hash);
  EXPECT_EQ(in_place.stream, copied.stream);
  // One byte short of the padding takes the copying path, with the same answer.
  RequestFacts short_padding;
  ASSERT_TRUE(inspector_.inspect(padded.data(), body.size(), padded.size() - 1,
                                 ApiKind::kChatCompletions, {}, short_padding));
  EXPECT_EQ(short_padding.prompt_digest, copied.prompt_digest);
}

TEST_F(RequestInspectorTest, FactsAreReusedWithoutReallocating) {
  InspectHeaders headers;
  headers.vllm_token_ids = "1,2,3,4,5,6,7,8";
  ASSERT_TRUE(inspect(R"({"model":"a-long-model-name-0001","messages":[{"role":"user",)"
                      R"("content":"first"}]})",
                      ApiKind::kChatCompletions, headers));
  const uint32_t* ids = facts_.token_ids.data();
  const char* prompt = facts_.prompt.data();
  const char* model = facts_.model.data();
  headers.vllm_token_ids = "9,10";
  ASSERT_TRUE(inspect(R"({"model":"a-long-model-name-0002","messages":[{"role":"user",)"
                      R"("content":"second"}]})",
                      ApiKind::kChatCompletions, headers));
  EXPECT_EQ(facts_.token_ids, (std::vector<uint32_t>{9, 10}));
  EXPECT_EQ(facts_.prompt, "second");
  EXPECT_EQ(facts_.token_ids.data(), ids);
  EXPECT_EQ(facts_.prompt.data(), prompt);
  EXPECT_EQ(facts_.model.data(), model);
  // A request with fewer facts leaves none of the previous ones behind.
  ASSERT_TRUE(inspect(R"({"model":"b","input":"x"})", ApiKind::kEmbeddings));
  EXPECT_FALSE(facts_.has_token_ids);
  EXPECT_TRUE(facts_.token_ids.empty());
  EXPECT_TRUE(facts_.session_key.empty());
  EXPECT_EQ(facts_.kind, ApiKind::kEmbeddings);
}

TEST_F(RequestInspectorTest, LargeBodyThenSmallBody) {
  std::string big = R"({"model":"m","messages":[{"role":"user","content":")";
  big.append(3 << 20, 'z');
  big += R"("}]})";
  ASSERT_TRUE(inspect(big, ApiKind::kChatCompletions));
  EXPECT_EQ(facts_.prompt_len, size_t{3} << 20);
  ASSERT_TRUE(inspect(R"({"model":"m","messages":[{"role":"user","content":"s"}]})",
                      ApiKind::kChatCompletions));
  EXPECT_EQ(facts_.prompt, "s");
}

}  // namespace
}  // namespace rolter
