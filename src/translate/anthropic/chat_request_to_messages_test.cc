// chat_to_anthropic().request(): every field of SPEC §16, and every refusal naming its field.
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
  std::vector<FieldCheck> checks;     // on the translated body, when it translates
  std::string error_param = kAbsent;  // the field a 400 must name, when it must fail
};

const std::vector<Case>& cases() {
  static const std::vector<Case> kCases = {
      {"MinimalDefaults",
       R"({"model":"gpt","messages":[{"role":"user","content":"hi"}]})",
       {{"/model", R"("claude-x")"},
        {"/max_tokens", "4096"},
        {"/system", kAbsent},
        {"/stream", kAbsent},
        {"/tool_choice", kAbsent},
        {"/tools", kAbsent},
        {"/messages", R"([{"role":"user","content":[{"type":"text","text":"hi"}]}])"}}},
      {"OneSystemMessageIsAString",
       R"({"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"hi"}]})",
       {{"/system", R"("Be brief.")"}, {"/messages/0/role", R"("user")"}}},
      {"SystemAndDeveloperPartsAreBlocks",
       R"({"messages":[{"role":"system","content":[{"type":"text","text":"A"},{"type":"text","text":"B"}]},
           {"role":"user","content":"hi"},{"role":"developer","content":"C"}]})",
       {{"/system",
         R"([{"type":"text","text":"A"},{"type":"text","text":"B"},{"type":"text","text":"C"}])"},
        {"/messages/0/content", R"([{"type":"text","text":"hi"}])"}}},
      {"TextAndImages",
       R"({"messages":[{"role":"user","content":[{"type":"text","text":"what is this?"},
           {"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},
           {"type":"image_url","image_url":{"url":"https://example.com/cat.jpg","detail":"high"}}]}]})",
       {{"/messages/0/content/0", R"({"type":"text","text":"what is this?"})"},
        {"/messages/0/content/1",
         R"({"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}})"},
        {"/messages/0/content/2",
         R"({"type":"image","source":{"type":"url","url":"https://example.com/cat.jpg"}})"}}},
      {"ToolCallsAndResultsMergeIntoAlternatingTurns",
       R"({"messages":[{"role":"user","content":"weather in Paris and Rome?"},
           {"role":"assistant","content":"","tool_calls":[
             {"id":"call_1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}},
             {"id":"call_2","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Rome\"}"}}]},
           {"role":"tool","tool_call_id":"call_1","content":"18C"},
           {"role":"tool","tool_call_id":"call_2","content":[{"type":"text","text":"21C"}]},
           {"role":"user","content":"thanks"},
           {"role":"assistant","content":"Paris 18C, Rome 21C."},
           {"role":"assistant","content":"Anything else?"}]})",
       {{"/messages/1",
         R"({"role":"assistant","content":[
             {"type":"tool_use","id":"call_1","name":"weather","input":{"city":"Paris"}},
             {"type":"tool_use","id":"call_2","name":"weather","input":{"city":"Rome"}}]})"},
        {"/messages/2",
         R"({"role":"user","content":[
             {"type":"tool_result","tool_use_id":"call_1","content":"18C"},
             {"type":"tool_result","tool_use_id":"call_2","content":[{"type":"text","text":"21C"}]},
             {"type":"text","text":"thanks"}]})"},
        {"/messages/3",
         R"({"role":"assistant","content":[{"type":"text","text":"Paris 18C, Rome 21C."},
             {"type":"text","text":"Anything else?"}]})"},
        {"/messages/4", kAbsent}}},
      {"EmptyArgumentsAreAnEmptyInput",
       R"({"messages":[{"role":"assistant","content":null,"tool_calls":[
           {"id":"c","type":"function","function":{"name":"now","arguments":""}}]}]})",
       {{"/messages/0/content", R"([{"type":"tool_use","id":"c","name":"now","input":{}}])"}}},
      {"Tools",
       R"({"messages":[],"tools":[
           {"type":"function","function":{"name":"weather","description":"Weather now",
            "parameters":{"type":"object","properties":{"city":{"type":"string"}}},"strict":true}},
           {"type":"function","function":{"name":"now"}}]})",
       {{"/tools",
         R"([{"name":"weather","description":"Weather now",
              "input_schema":{"type":"object","properties":{"city":{"type":"string"}}}},
             {"name":"now","input_schema":{"type":"object"}}])"}}},
      {"ToolChoiceAuto",
       R"({"messages":[],"tool_choice":"auto"})",
       {{"/tool_choice", R"({"type":"auto"})"}}},
      {"ToolChoiceNone",
       R"({"messages":[],"tool_choice":"none"})",
       {{"/tool_choice", R"({"type":"none"})"}}},
      {"ToolChoiceRequired",
       R"({"messages":[],"tool_choice":"required"})",
       {{"/tool_choice", R"({"type":"any"})"}}},
      {"ToolChoiceNamed",
       R"({"messages":[],"tool_choice":{"type":"function","function":{"name":"weather"}}})",
       {{"/tool_choice", R"({"type":"tool","name":"weather"})"}}},
      {"SerialToolCallsAlone",
       R"({"messages":[],"parallel_tool_calls":false})",
       {{"/tool_choice", R"({"type":"auto","disable_parallel_tool_use":true})"}}},
      {"SerialToolCallsOnRequired",
       R"({"messages":[],"tool_choice":"required","parallel_tool_calls":false})",
       {{"/tool_choice", R"({"type":"any","disable_parallel_tool_use":true})"}}},
      {"ParallelToolCallsTrueIsTheDefault",
       R"({"messages":[],"parallel_tool_calls":true})",
       {{"/tool_choice", kAbsent}}},
      {"SamplingAndLimits",
       R"({"messages":[],"max_tokens":100,"temperature":0.5,"top_p":0.9,"top_k":40,"stop":"END",
           "user":"u-42","stream":true,"stream_options":{"include_usage":true},"seed":7,"n":1,
           "logprobs":false,"presence_penalty":0,"frequency_penalty":0.0,"logit_bias":{},
           "response_format":{"type":"text"},"modalities":["text"],"store":false})",
       {{"/max_tokens", "100"},
        {"/temperature", "0.5"},
        {"/top_p", "0.9"},
        {"/top_k", "40"},
        {"/stop_sequences", R"(["END"])"},
        {"/metadata", R"({"user_id":"u-42"})"},
        {"/stream", "true"},
        {"/stream_options", kAbsent},
        {"/seed", kAbsent},
        {"/n", kAbsent}}},
      {"MaxCompletionTokensWins",
       R"({"messages":[],"max_tokens":100,"max_completion_tokens":300,"stop":["a","b"]})",
       {{"/max_tokens", "300"}, {"/stop_sequences", R"(["a","b"])"}}},
      {"NullsAreAbsent",
       R"({"messages":[],"temperature":null,"tools":null,"n":null})",
       {{"/temperature", kAbsent}, {"/tools", kAbsent}}},
      // Refusals.
      {"NotJson", "{", {}, ""},
      {"NotAnObject", "[1]", {}, ""},
      {"NoMessages", R"({"model":"x"})", {}, "messages"},
      {"MessagesNotArray", R"({"messages":{}})", {}, "messages"},
      {"NGreaterThanOne", R"({"messages":[],"n":2})", {}, "n"},
      {"Logprobs", R"({"messages":[],"logprobs":true})", {}, "logprobs"},
      {"TopLogprobs", R"({"messages":[],"top_logprobs":3})", {}, "top_logprobs"},
      {"JsonObject",
       R"({"messages":[],"response_format":{"type":"json_object"}})",
       {},
       "response_format"},
      {"JsonSchema",
       R"({"messages":[],"response_format":{"type":"json_schema","json_schema":{}}})",
       {},
       "response_format"},
      {"Audio", R"({"messages":[],"audio":{"voice":"alloy"}})", {}, "audio"},
      {"AudioModality", R"({"messages":[],"modalities":["text","audio"]})", {}, "modalities"},
      {"PresencePenalty", R"({"messages":[],"presence_penalty":0.5})", {}, "presence_penalty"},
      {"FrequencyPenalty", R"({"messages":[],"frequency_penalty":1})", {}, "frequency_penalty"},
      {"LogitBias", R"({"messages":[],"logit_bias":{"50256":-100}})", {}, "logit_bias"},
      {"ReasoningEffort", R"({"messages":[],"reasoning_effort":"high"})", {}, "reasoning_effort"},
      {"LegacyFunctions", R"({"messages":[],"functions":[]})", {}, "functions"},
      {"UnknownField", R"({"messages":[],"frobnicate":1})", {}, "frobnicate"},
      {"FunctionRole",
       R"({"messages":[{"role":"function","name":"f","content":"x"}]})",
       {},
       "messages[0].role"},
      {"BadArguments",
       R"({"messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[
           {"id":"c","type":"function","function":{"name":"f","arguments":"{not json"}}]}]})",
       {},
       "messages[1].tool_calls[0].function.arguments"},
      {"ArgumentsNotAnObject",
       R"({"messages":[{"role":"assistant","tool_calls":[
           {"id":"c","type":"function","function":{"name":"f","arguments":"[1]"}}]}]})",
       {},
       "messages[0].tool_calls[0].function.arguments"},
      {"FtpImage",
       R"({"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"ftp://x/y.png"}}]}]})",
       {},
       "messages[0].content[0].image_url"},
      {"AudioPart",
       R"({"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{}}]}]})",
       {},
       "messages[0].content[0].type"},
      {"ImageInSystem",
       R"({"messages":[{"role":"system","content":[{"type":"image_url","image_url":{"url":"https://x"}}]}]})",
       {},
       "messages[0].content[0].type"},
      {"ToolWithoutCallId",
       R"({"messages":[{"role":"tool","content":"x"}]})",
       {},
       "messages[0].tool_call_id"},
      {"ZeroMaxTokens", R"({"messages":[],"max_tokens":0})", {}, "max_tokens"},
      {"NegativeMaxCompletionTokens",
       R"({"messages":[],"max_completion_tokens":-5})",
       {},
       "max_completion_tokens"},
      {"CustomToolType",
       R"({"messages":[],"tools":[{"type":"custom","custom":{"name":"x"}}]})",
       {},
       "tools[0].type"},
      {"AllowedToolsChoice",
       R"({"messages":[],"tool_choice":{"type":"allowed_tools"}})",
       {},
       "tool_choice"},
      {"StopNotStrings", R"({"messages":[],"stop":[1]})", {}, "stop"},
      {"TemperatureNotNumber", R"({"messages":[],"temperature":"hot"})", {}, "temperature"},
  };
  return kCases;
}

TEST(ChatRequestToMessages, Table) {
  const TranslateOptions options{.model = "claude-x", .default_max_tokens = 4096};
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    auto result = chat_to_anthropic().request(c.body, options);
    if (c.error_param != kAbsent) {
      ASSERT_FALSE(result.has_value()) << result->body;
      EXPECT_EQ(result.error().status, 400u);
      EXPECT_EQ(result.error().param, c.error_param);
      EXPECT_NE(result.error().message.find(c.error_param), std::string::npos)
          << result.error().message;
      continue;
    }
    ASSERT_TRUE(result.has_value()) << result.error().message;
    EXPECT_EQ(result->path, "/v1/messages");
    const auto body = parse_or_fail(result->body, c.name);
    EXPECT_EQ(result->stream, body.contains("stream"));
    expect_fields(body, c.checks, c.name);
  }
}

TEST(ChatRequestToMessages, DefaultMaxTokensComesFromOptions) {
  auto result =
      chat_to_anthropic().request(R"({"messages":[]})", {.model = "m", .default_max_tokens = 77});
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(parse_or_fail(result->body, "default")["max_tokens"], 77);
}

TEST(ChatRequestToMessages, RefusesAbsurdNesting) {
  const std::string deep =
      R"({"messages":[],"tools":)" + std::string(100000, '[') + std::string(100000, ']') + "}";
  auto result = chat_to_anthropic().request(deep, {.model = "m"});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().status, 400u);
}

}  // namespace
}  // namespace rolter::anthropic
