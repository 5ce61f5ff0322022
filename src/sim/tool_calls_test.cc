#include "sim/tool_calls.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "sim/engine.h"

namespace rolter::sim {
namespace {

using Json = nlohmann::json;

// One weather tool and one clock tool, in each API's request shape.
constexpr const char* kOpenAITools = R"([
  {"type":"function","function":{"name":"weather","parameters":{"type":"object",
    "properties":{"city":{"type":"string"}},"required":["city"]}}},
  {"type":"function","function":{"name":"clock","parameters":{"type":"object","properties":{}}}}])";
constexpr const char* kAnthropicTools = R"([
  {"name":"weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}}}},
  {"name":"clock","input_schema":{"type":"object"}}])";
constexpr const char* kGeminiTools = R"([{"functionDeclarations":[
  {"name":"weather","parameters":{"type":"OBJECT","properties":{"city":{"type":"STRING"}}}},
  {"name":"clock"}]}])";

struct PickCase {
  const char* what;
  const char* body;  // the tools are added under "tools" unless the body has them
  const char* want;  // "" = a text answer, "!" = a 400
};

void run_pick_cases(const char* api, ToolPick (*pick)(const Json&), const char* tools,
                    const std::vector<PickCase>& cases) {
  for (const PickCase& k : cases) {
    Json body = Json::parse(k.body);
    if (!body.contains("tools")) body["tools"] = Json::parse(tools);
    const ToolPick got = pick(body);
    const std::string label = std::string(api) + ": " + k.what;
    if (std::string(k.want) == "!") {
      EXPECT_FALSE(got.has_value()) << label;
      continue;
    }
    ASSERT_TRUE(got.has_value()) << label << ": " << got.error();
    EXPECT_EQ(got->has_value() ? (*got)->name : "", k.want) << label;
  }
}

TEST(ToolCallsTest, OpenAIPicksByTheRule) {
  run_pick_cases(
      "openai", pick_openai_tool, kOpenAITools,
      {
          {"user turn: first tool", R"({"messages":[{"role":"user","content":"hi"}]})", "weather"},
          {"auto", R"({"messages":[{"role":"user","content":"hi"}],"tool_choice":"auto"})",
           "weather"},
          {"required", R"({"messages":[{"role":"user","content":"x"}],"tool_choice":"required"})",
           "weather"},
          {"named", R"({"messages":[{"role":"user","content":"hi"}],
         "tool_choice":{"type":"function","function":{"name":"clock"}}})",
           "clock"},
          {"none", R"({"messages":[{"role":"user","content":"hi"}],"tool_choice":"none"})", ""},
          {"tool result last", R"({"messages":[{"role":"user","content":"hi"},
         {"role":"assistant","tool_calls":[]},{"role":"tool","content":"20C"}]})",
           ""},
          {"no tools", R"({"messages":[{"role":"user","content":"hi"}],"tools":[]})", ""},
          {"unknown name", R"({"messages":[{"role":"user","content":"hi"}],
         "tool_choice":{"type":"function","function":{"name":"nope"}}})",
           "!"},
      });
}

TEST(ToolCallsTest, AnthropicPicksByTheRule) {
  run_pick_cases(
      "anthropic", pick_anthropic_tool, kAnthropicTools,
      {
          {"user turn: first tool", R"({"messages":[{"role":"user","content":"hi"}]})", "weather"},
          {"any", R"({"messages":[{"role":"user","content":"hi"}],"tool_choice":{"type":"any"}})",
           "weather"},
          {"named", R"({"messages":[{"role":"user","content":"hi"}],
         "tool_choice":{"type":"tool","name":"clock"}})",
           "clock"},
          {"none", R"({"messages":[{"role":"user","content":"hi"}],"tool_choice":{"type":"none"}})",
           ""},
          {"tool_result last", R"({"messages":[{"role":"user","content":"hi"},
         {"role":"assistant","content":[{"type":"tool_use","id":"t","name":"weather","input":{}}]},
         {"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"20C"}]}]})",
           ""},
          {"unknown name", R"({"messages":[{"role":"user","content":"hi"}],
         "tool_choice":{"type":"tool","name":"nope"}})",
           "!"},
      });
}

TEST(ToolCallsTest, GeminiPicksByTheRule) {
  run_pick_cases(
      "gemini", pick_gemini_tool, kGeminiTools,
      {
          {"user turn: first tool", R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}]})",
           "weather"},
          {"no role is the user", R"({"contents":[{"parts":[{"text":"hi"}]}]})", "weather"},
          {"allowed names", R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}],
         "toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["clock"]}}})",
           "clock"},
          {"mode NONE", R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}],
         "toolConfig":{"functionCallingConfig":{"mode":"NONE"}}})",
           ""},
          {"functionResponse last", R"({"contents":[{"role":"user","parts":[{"text":"hi"}]},
         {"role":"model","parts":[{"functionCall":{"name":"weather","args":{}}}]},
         {"role":"user","parts":[{"functionResponse":{"name":"weather","response":{}}}]}]})",
           ""},
          {"bad toolConfig is ignored", R"({"contents":[{"role":"user","parts":[{"text":"h"}]}],
         "toolConfig":"x"})",
           "weather"},
      });
}

TEST(ToolCallsTest, ArgumentsFollowTheSchema) {
  const ToolChoice tool{"t", R"({"type":"object","properties":{
      "s":{"type":"string"}, "i":{"type":"integer"}, "n":{"type":"number"},
      "b":{"type":"boolean"}, "e":{"type":"string","enum":["red","blue"]},
      "o":{"type":"object","properties":{"x":{"type":"boolean"}}},
      "a":{"type":"array","items":{"type":"integer"}}, "u":{"type":["null","boolean"]},
      "g":{"type":"STRING"}, "k":{"const":7}, "f":{"anyOf":[{"type":"boolean"}]}}})"};
  const Json args = Json::parse(tool_arguments(7, tool));
  ASSERT_TRUE(args.is_object());
  EXPECT_EQ(args.size(), 11u);
  EXPECT_TRUE(args["s"].is_string());
  EXPECT_EQ(args["s"].get<std::string>().find(' '), std::string::npos);
  EXPECT_TRUE(args["g"].is_string());
  for (const char* number : {"i", "n"}) {
    ASSERT_TRUE(args[number].is_number_integer()) << number;
    EXPECT_GE(args[number].get<int>(), 1);
    EXPECT_LE(args[number].get<int>(), 9);
  }
  EXPECT_EQ(args["b"], true);
  EXPECT_EQ(args["e"], "red");
  EXPECT_EQ(args["o"], Json::parse(R"({"x":true})"));
  ASSERT_EQ(args["a"].size(), 1u);
  EXPECT_TRUE(args["a"][0].is_number_integer());
  EXPECT_EQ(args["u"], true);
  EXPECT_EQ(args["k"], 7);
  EXPECT_EQ(args["f"], true);
  EXPECT_EQ(tool_arguments(7, tool), tool_arguments(7, tool)) << "deterministic";
}

TEST(ToolCallsTest, ArgumentsOfOddSchemas) {
  EXPECT_EQ(tool_arguments(1, {"t", "{}"}), "{}");
  EXPECT_EQ(tool_arguments(1, {"t", "not json"}), "{}");
  EXPECT_EQ(tool_arguments(1, {"t", "[1]"}), "{}");
  // A schema nested deeper than any real one ends in null rather than recursing on.
  std::string deep = R"({"type":"string"})";
  for (int i = 0; i < 20; ++i) deep = R"({"type":"object","properties":{"p":)" + deep + "}}";
  EXPECT_NE(tool_arguments(1, {"t", deep}).find("null"), std::string::npos);
}

TEST(ToolCallsTest, SplitArgumentsKeepsUtf8Whole) {
  const std::string args = R"({"city":"Zürich-Zürich-Zürich"})";
  const std::vector<std::string> parts = split_arguments(args);
  std::string joined;
  for (const auto& p : parts) {
    EXPECT_LE(p.size(), kArgumentFragmentBytes + 1);
    EXPECT_NE(static_cast<unsigned char>(p.front()) & 0xC0, 0x80) << "starts mid-character";
    joined += p;
  }
  EXPECT_EQ(joined, args);
  EXPECT_EQ(split_arguments("{}"), std::vector<std::string>{"{}"});
}

// The engine answers with the call in each API's shape and counts its fragments as tokens.
TEST(ToolCallsTest, EngineAnswersWithTheCall) {
  struct Case {
    ApiKind api;
    const char* path;
    const char* body;
  };
  const Case cases[] = {
      {ApiKind::kChat, "/v1/chat/completions",
       R"({"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function",
          "function":{"name":"weather","parameters":{"properties":{"city":{"type":"string"}}}}}]})"},
      {ApiKind::kMessages, "/v1/messages",
       R"({"max_tokens":9,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"weather",
          "input_schema":{"properties":{"city":{"type":"string"}}}}]})"},
      {ApiKind::kGemini, "/v1beta/models/g:generateContent",
       R"({"contents":[{"parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[{
          "name":"weather","parameters":{"properties":{"city":{"type":"string"}}}}]}]})"},
  };
  for (const Case& k : cases) {
    Engine e(EngineOptions{.seed = 3});
    RequestPlan plan = e.begin(k.api, k.path, k.body, {});
    ASSERT_EQ(plan.status, 200) << k.path << ": " << plan.body;
    const Completion& c = plan.completion;
    ASSERT_TRUE(c.tool_call.has_value()) << k.path;
    EXPECT_EQ(c.tool_call->name, "weather");
    EXPECT_TRUE(Json::parse(c.tool_call->arguments)["city"].is_string());
    EXPECT_EQ(c.completion_tokens(), split_arguments(c.tool_call->arguments).size());
    EXPECT_EQ(plan.model_request->output_tokens, c.length());
    const Json body = Json::parse(render_response(c));
    if (k.api == ApiKind::kChat) {
      EXPECT_EQ(body["choices"][0]["finish_reason"], "tool_calls");
      EXPECT_EQ(body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"],
                c.tool_call->arguments);
      EXPECT_EQ(c.tool_call->id.rfind("call_", 0), 0u);
    } else if (k.api == ApiKind::kMessages) {
      EXPECT_EQ(body["stop_reason"], "tool_use");
      EXPECT_EQ(body["content"][0]["type"], "tool_use");
      EXPECT_EQ(body["content"][0]["input"], Json::parse(c.tool_call->arguments));
      EXPECT_EQ(c.tool_call->id.rfind("toolu_", 0), 0u);
    } else {
      EXPECT_EQ(body["candidates"][0]["finishReason"], "STOP");
      EXPECT_EQ(body["candidates"][0]["content"]["parts"][0]["functionCall"]["args"],
                Json::parse(c.tool_call->arguments));
    }
  }
}

}  // namespace
}  // namespace rolter::sim
