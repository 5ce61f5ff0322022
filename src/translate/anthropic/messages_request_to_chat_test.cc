// anthropic_to_chat().request(): the inverse mapping, field by field, its refusals, and a tool
// conversation that goes chat → Anthropic → chat and comes back the same.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "translate/anthropic/anthropic_translators.h"
#include "translate/anthropic/test_checks.h"

namespace rolter::anthropic {
namespace {

struct Case {
  std::string name;
  std::string body;
  std::vector<FieldCheck> checks;
  std::string error_param = kAbsent;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> kCases = {
      {"Minimal",
       R"({"model":"claude","max_tokens":50,"messages":[{"role":"user","content":"hi"}]})",
       {{"/model", R"("llama")"},
        {"/max_tokens", "50"},
        {"/stream", kAbsent},
        {"/stream_options", kAbsent},
        {"/messages", R"([{"role":"user","content":"hi"}])"}}},
      {"SystemString",
       R"({"system":"Be brief.","messages":[{"role":"user","content":"hi"}]})",
       {{"/messages/0", R"({"role":"system","content":"Be brief."})"},
        {"/messages/1/role", R"("user")"}}},
      {"SystemBlocks",
       R"({"system":[{"type":"text","text":"A","cache_control":{"type":"ephemeral"}},{"type":"text","text":"B"}],
           "messages":[]})",
       {{"/messages/0",
         R"({"role":"system","content":[{"type":"text","text":"A"},{"type":"text","text":"B"}]})"}}},
      {"TextAndImages",
       R"({"messages":[{"role":"user","content":[{"type":"text","text":"what?"},
           {"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"/9j/4AAQ"}},
           {"type":"image","source":{"type":"url","url":"https://example.com/a.png"}}]}]})",
       {{"/messages/0/content",
         R"([{"type":"text","text":"what?"},
             {"type":"image_url","image_url":{"url":"data:image/jpeg;base64,/9j/4AAQ"}},
             {"type":"image_url","image_url":{"url":"https://example.com/a.png"}}])"}}},
      {"AssistantToolUses",
       R"({"messages":[{"role":"assistant","content":[
           {"type":"thinking","thinking":"hmm","signature":"s"},
           {"type":"text","text":"Checking."},
           {"type":"tool_use","id":"toolu_1","name":"weather","input":{"city":"Paris","unit":"C"}},
           {"type":"tool_use","id":"toolu_2","name":"now","input":{}}]}]})",
       {{"/messages/0",
         R"({"role":"assistant","content":"Checking.","tool_calls":[
             {"id":"toolu_1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\",\"unit\":\"C\"}"}},
             {"id":"toolu_2","type":"function","function":{"name":"now","arguments":"{}"}}]})"}}},
      {"OnlyToolUseHasNullContent",
       R"({"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]}]})",
       {{"/messages/0/content", "null"}}},
      {"ToolResultsComeFirstAsToolMessages",
       R"({"messages":[{"role":"user","content":[
           {"type":"tool_result","tool_use_id":"toolu_1","content":"18C"},
           {"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},
           {"type":"tool_result","tool_use_id":"toolu_3","content":"timeout","is_error":true},
           {"type":"text","text":"go on"}]}]})",
       {{"/messages",
         R"([{"role":"tool","tool_call_id":"toolu_1","content":"18C"},
             {"role":"tool","tool_call_id":"toolu_2","content":"a\nb"},
             {"role":"tool","tool_call_id":"toolu_3","content":"Error: timeout"},
             {"role":"user","content":[{"type":"text","text":"go on"}]}])"}}},
      {"Tools",
       R"({"messages":[],"tools":[{"name":"weather","description":"Weather now",
            "input_schema":{"type":"object","properties":{"city":{"type":"string"}}}},
           {"type":"custom","name":"now","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}}]})",
       {{"/tools",
         R"([{"type":"function","function":{"name":"weather","description":"Weather now",
              "parameters":{"type":"object","properties":{"city":{"type":"string"}}}}},
             {"type":"function","function":{"name":"now","parameters":{"type":"object"}}}])"}}},
      {"ToolChoiceAuto",
       R"({"messages":[],"tool_choice":{"type":"auto"}})",
       {{"/tool_choice", R"("auto")"}, {"/parallel_tool_calls", kAbsent}}},
      {"ToolChoiceAny",
       R"({"messages":[],"tool_choice":{"type":"any"}})",
       {{"/tool_choice", R"("required")"}}},
      {"ToolChoiceNone",
       R"({"messages":[],"tool_choice":{"type":"none"}})",
       {{"/tool_choice", R"("none")"}}},
      {"ToolChoiceTool",
       R"({"messages":[],"tool_choice":{"type":"tool","name":"weather","disable_parallel_tool_use":true}})",
       {{"/tool_choice", R"({"type":"function","function":{"name":"weather"}})"},
        {"/parallel_tool_calls", "false"}}},
      {"SamplingAndLimits",
       R"({"messages":[],"max_tokens":1024,"temperature":0.2,"top_p":0.8,"top_k":20,
           "stop_sequences":["END","STOP"],"metadata":{"user_id":"u-7"},"stream":true,
           "service_tier":"auto","thinking":{"type":"disabled"}})",
       {{"/max_tokens", "1024"},
        {"/temperature", "0.2"},
        {"/top_p", "0.8"},
        {"/top_k", "20"},
        {"/stop", R"(["END","STOP"])"},
        {"/user", R"("u-7")"},
        {"/stream", "true"},
        {"/stream_options", R"({"include_usage":true})"},
        {"/metadata", kAbsent},
        {"/service_tier", kAbsent},
        {"/thinking", kAbsent}}},
      {"StreamFalse", R"({"messages":[],"stream":false})", {{"/stream", kAbsent}}},
      // Refusals.
      {"NotJson", "nope", {}, ""},
      {"NoMessages", R"({"max_tokens":5})", {}, "messages"},
      {"Thinking",
       R"({"messages":[],"thinking":{"type":"enabled","budget_tokens":2000}})",
       {},
       "thinking"},
      {"ServerTool",
       R"({"messages":[],"tools":[{"type":"web_search_20250305","name":"web_search"}]})",
       {},
       "tools[0].type"},
      {"Document",
       R"({"messages":[{"role":"user","content":[{"type":"document","source":{"type":"text","data":"x"}}]}]})",
       {},
       "messages[0].content[0].type"},
      {"ImageInToolResult",
       R"({"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[
           {"type":"image","source":{"type":"url","url":"https://x"}}]}]}]})",
       {},
       "messages[0].content[0].content[0]"},
      {"FileImage",
       R"({"messages":[{"role":"user","content":[{"type":"image","source":{"type":"file","file_id":"f"}}]}]})",
       {},
       "messages[0].content[0].source"},
      {"SystemRoleInMessages",
       R"({"messages":[{"role":"system","content":"x"}]})",
       {},
       "messages[0].role"},
      {"UnknownField", R"({"messages":[],"container":"c"})", {}, "container"},
      {"McpServers", R"({"messages":[],"mcp_servers":[]})", {}, "mcp_servers"},
      {"BadToolChoice", R"({"messages":[],"tool_choice":{"type":"sometimes"}})", {}, "tool_choice"},
      {"StopNotArray", R"({"messages":[],"stop_sequences":"END"})", {}, "stop_sequences"},
  };
  return kCases;
}

TEST(MessagesRequestToChat, Table) {
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    auto result = anthropic_to_chat().request(c.body, {.model = "llama"});
    if (c.error_param != kAbsent) {
      ASSERT_FALSE(result.has_value()) << result->body;
      EXPECT_EQ(result.error().status, 400u);
      EXPECT_EQ(result.error().param, c.error_param);
      EXPECT_NE(result.error().message.find(c.error_param), std::string::npos)
          << result.error().message;
      continue;
    }
    ASSERT_TRUE(result.has_value()) << result.error().message;
    EXPECT_EQ(result->path, "/v1/chat/completions");
    const auto body = parse_or_fail(result->body, c.name);
    EXPECT_EQ(result->stream, body.contains("stream"));
    expect_fields(body, c.checks, c.name);
  }
}

// A tool conversation in chat form, sent to Anthropic and back, is the same conversation.
TEST(MessagesRequestToChat, ToolConversationRoundTrips) {
  const std::string chat = R"({"model":"gpt","max_tokens":200,"messages":[
      {"role":"system","content":"You are terse."},
      {"role":"user","content":"weather in Paris and Rome?"},
      {"role":"assistant","content":null,"tool_calls":[
        {"id":"call_1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}},
        {"id":"call_2","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Rome\"}"}}]},
      {"role":"tool","tool_call_id":"call_1","content":"18C"},
      {"role":"tool","tool_call_id":"call_2","content":"21C"},
      {"role":"assistant","content":"Paris 18C, Rome 21C."}],
    "tools":[{"type":"function","function":{"name":"weather","parameters":{"type":"object"}}}],
    "tool_choice":"required"})";
  auto to_anthropic = chat_to_anthropic().request(chat, {.model = "claude"});
  ASSERT_TRUE(to_anthropic.has_value()) << to_anthropic.error().message;
  auto back = anthropic_to_chat().request(to_anthropic->body, {.model = "gpt"});
  ASSERT_TRUE(back.has_value()) << back.error().message;
  const auto original = parse_or_fail(chat, "original");
  const auto round = parse_or_fail(back->body, "round trip");
  // Every message comes back as it was, except that the user's text comes back as a text part
  // (Anthropic content blocks carry no memory of a plain string).
  auto expected = original["messages"];
  expected[1]["content"] =
      nlohmann::json::parse(R"([{"type":"text","text":"weather in Paris and Rome?"}])");
  EXPECT_EQ(round["messages"], expected);
  EXPECT_EQ(round["tools"], original["tools"]);
  EXPECT_EQ(round["tool_choice"], original["tool_choice"]);
  EXPECT_EQ(round["max_tokens"], 200);
}

}  // namespace
}  // namespace rolter::anthropic
