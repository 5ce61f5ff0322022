// chat_to_gemini().request(): what cannot be translated, or cannot be read, is a 400 naming the
// field.
#include "translate/gemini/gemini_translator.h"

#include "translate/gemini/gemini_test_util.h"

namespace rolter {
namespace {

struct RefusedCase {
  std::string body;
  std::string param;
};

TEST(GeminiRequest, RefusesWhatCannotBeTranslated) {
  const std::string user = R"("messages":[{"role":"user","content":"x"}])";
  const std::vector<RefusedCase> cases = {
      {"not json", ""},
      {"[1]", ""},
      {"{}", "messages"},
      {R"({"messages":[]})", "messages"},
      {R"({"messages":{}})", "messages"},
      {R"({"messages":[{"role":"system","content":"only this"}]})", "messages"},
      {"{" + user + R"(,"logprobs":true})", "logprobs"},
      {"{" + user + R"(,"top_logprobs":3})", "top_logprobs"},
      {"{" + user + R"(,"logit_bias":{"50256":-100}})", "logit_bias"},
      {"{" + user + R"(,"audio":{"voice":"alloy","format":"wav"}})", "audio"},
      {"{" + user + R"(,"modalities":["text","audio"]})", "modalities"},
      {"{" + user + R"(,"functions":[{"name":"f"}]})", "functions"},
      {"{" + user + R"(,"web_search_options":{}})", "web_search_options"},
      {"{" + user + R"(,"temperature":"hot"})", "temperature"},
      {"{" + user + R"(,"n":-1})", "n"},
      {"{" + user + R"(,"max_tokens":1.5})", "max_tokens"},
      {"{" + user + R"(,"stop":5})", "stop"},
      {"{" + user + R"(,"stop":["a",1]})", "stop"},
      {"{" + user + R"(,"stream":"yes"})", "stream"},
      {"{" + user + R"(,"response_format":{"type":"xml"}})", "response_format.type"},
      {"{" + user + R"(,"tools":[{"type":"custom","custom":{"name":"x"}}]})", "tools[0].type"},
      {"{" + user + R"(,"tools":[{"type":"function","function":{}}]})", "tools[0].function.name"},
      {"{" + user + R"(,"tools":{}})", "tools"},
      {"{" + user +
           R"(,"tool_choice":"sometimes","tools":[{"type":"function","function":{"name":"f"}}]})",
       "tool_choice"},
      {"{" + user + R"(,"tools":[{"type":"function","function":{"name":"f","parameters":
          {"$ref":"#/$defs/N","$defs":{"N":{"type":"object","properties":{"next":{"$ref":"#/$defs/N"}}}}}}}]})",
       "tools[0].function.parameters"},
      {"{" + user +
           R"(,"tools":[{"type":"function","function":{"name":"f","parameters":{"$ref":"http://x/s.json"}}}]})",
       "tools[0].function.parameters"},
      {R"({"messages":[{"role":"function","name":"f","content":"1"}]})", "messages[0].role"},
      {R"({"messages":[{"content":"1"}]})", "messages[0].role"},
      {R"({"messages":[{"role":"user","content":"a"},{"role":"tool","tool_call_id":"nope","content":"1"}]})",
       "messages[1].tool_call_id"},
      {R"({"messages":[{"role":"user","content":"a"},{"role":"assistant","tool_calls":[
          {"id":"1","type":"function","function":{"name":"f","arguments":"{not json"}}]}]})",
       "messages[1].tool_calls[0].function.arguments"},
      {R"({"messages":[{"role":"user","content":"a"},{"role":"assistant","tool_calls":[
          {"id":"1","type":"function","function":{"name":"f","arguments":"[1]"}}]}]})",
       "messages[1].tool_calls[0].function.arguments"},
      {R"({"messages":[{"role":"assistant","content":"a","function_call":{"name":"f"}}]})",
       "messages[0].function_call"},
      {R"({"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"ftp://x/a.png"}}]}]})",
       "messages[0].content[0].image_url.url"},
      {R"({"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png,abc"}}]}]})",
       "messages[0].content[0].image_url.url"},
      {R"({"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:;base64,abc"}}]}]})",
       "messages[0].content[0].image_url.url"},
      {R"({"messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"file-1"}}]}]})",
       "messages[0].content[0].file"},
      {R"({"messages":[{"role":"user","content":[{"type":"video","video":{}}]}]})",
       "messages[0].content[0].type"},
      {R"({"messages":[{"role":"system","content":[{"type":"image_url","image_url":{"url":"http://x"}}]}]})",
       "messages[0].content[0]"},
      {R"({"messages":[{"role":"user","content":7}]})", "messages[0].content"},
  };
  for (const auto& c : cases) {
    auto out = chat_to_gemini().request(c.body, {.model = "gemini-2.5-flash"});
    ASSERT_FALSE(out.has_value()) << c.body;
    EXPECT_EQ(out.error().status, 400u) << c.body;
    EXPECT_EQ(out.error().param, c.param) << c.body << ": " << out.error().message;
    EXPECT_FALSE(out.error().message.empty());
  }
}

TEST(GeminiRequest, NeedsAModel) {
  auto out = chat_to_gemini().request(R"({"messages":[{"role":"user","content":"x"}]})", {});
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().param, "model");
}

TEST(GeminiRequest, RefusesNestingBeyondTheBound) {
  std::string deep = R"({"messages":[{"role":"user","content":"x"}],"metadata":)";
  deep += std::string(300, '[') + std::string(300, ']') + "}";
  auto out = chat_to_gemini().request(deep, {.model = "m"});
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().status, 400u);
}

}  // namespace
}  // namespace rolter
