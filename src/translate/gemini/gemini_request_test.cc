// chat_to_gemini().request(): each field of a chat request as the Gemini body, and the path.
// Refusals are in gemini_request_refusal_test.cc.
#include "translate/gemini/gemini_translator.h"

#include "translate/gemini/gemini_test_util.h"

namespace rolter {
namespace {

using gemini_test::Expect;
using gemini_test::Json;

struct RequestCase {
  std::string name;
  std::string body;
  std::vector<Expect> expects;
};

const std::vector<RequestCase> kRequestCases = {
    {"roles_and_system",
     R"({"model":"gpt-4o","messages":[
          {"role":"system","content":"Be brief."},
          {"role":"developer","content":[{"type":"text","text":"Use French."},{"type":"text","text":"Really."}]},
          {"role":"user","content":"Hi"},
          {"role":"assistant","content":"Bonjour"},
          {"role":"user","content":[{"type":"text","text":"Et"},{"type":"text","text":"alors?"}]}]})",
     {{"/systemInstruction",
       R"({"parts":[{"text":"Be brief."},{"text":"Use French."},{"text":"Really."}]})"},
      {"/contents", R"([{"role":"user","parts":[{"text":"Hi"}]},
                        {"role":"model","parts":[{"text":"Bonjour"}]},
                        {"role":"user","parts":[{"text":"Et"},{"text":"alors?"}]}])"},
      {"/generationConfig", "absent"},
      {"/tools", "absent"},
      {"/toolConfig", "absent"}}},
    {"same_role_turns_merge_and_empty_text_is_skipped",
     R"({"messages":[{"role":"user","content":"a"},{"role":"user","content":""},
                     {"role":"user","content":[{"type":"text","text":"b"}]},
                     {"role":"assistant","content":""}]})",
     {{"/contents", R"([{"role":"user","parts":[{"text":"a"},{"text":"b"}]}])"}}},
    {"generation_config",
     R"({"messages":[{"role":"user","content":"x"}],"temperature":0.5,"top_p":0.9,"top_k":40,
         "max_tokens":100,"n":2,"seed":-7,"presence_penalty":0.25,"frequency_penalty":-0.5,
         "stop":["END","STOP"],"user":"u1","parallel_tool_calls":true,"logprobs":false})",
     {{"/generationConfig", R"({"temperature":0.5,"topP":0.9,"topK":40,"maxOutputTokens":100,
         "candidateCount":2,"seed":-7,"presencePenalty":0.25,"frequencyPenalty":-0.5,
         "stopSequences":["END","STOP"]})"}}},
    {"max_completion_tokens_wins_and_stop_string",
     R"({"messages":[{"role":"user","content":"x"}],"max_tokens":10,"max_completion_tokens":20,
         "stop":"\n\n"})",
     {{"/generationConfig/maxOutputTokens", "20"},
      {"/generationConfig/stopSequences", R"(["\n\n"])"}}},
    {"response_format_json_object",
     R"({"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_object"}})",
     {{"/generationConfig", R"({"responseMimeType":"application/json"})"}}},
    {"response_format_text",
     R"({"messages":[{"role":"user","content":"x"}],"response_format":{"type":"text"}})",
     {{"/generationConfig", "absent"}}},
    {"response_format_json_schema_is_sanitized",
     R"({"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema",
         "json_schema":{"name":"p","strict":true,"schema":{"$schema":"http://json-schema.org/draft-07/schema#",
           "type":"object","additionalProperties":false,"required":["name","tags"],
           "properties":{"name":{"type":["string","null"],"format":"email","maxLength":9},
                         "when":{"type":"string","format":"date-time"},
                         "kind":{"const":"a"},
                         "tags":{"type":"array","items":{"$ref":"#/$defs/Tag"}}},
           "$defs":{"Tag":{"type":"string","enum":["x","y"],"additionalProperties":false}}}}}})",
     {{"/generationConfig/responseMimeType", R"("application/json")"},
      {"/generationConfig/responseSchema", R"({"type":"object","required":["name","tags"],
         "properties":{"name":{"type":"string","nullable":true,"maxLength":9},
                       "when":{"type":"string","format":"date-time"},
                       "kind":{"enum":["a"]},
                       "tags":{"type":"array","items":{"type":"string","enum":["x","y"]}}}})"}}},
    {"images_both_kinds",
     R"({"messages":[{"role":"user","content":[
          {"type":"text","text":"What?"},
          {"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo=","detail":"high"}},
          {"type":"image_url","image_url":{"url":"https://example.com/cat.WEBP?size=2#x"}},
          {"type":"image_url","image_url":"http://example.com/photo"},
          {"type":"image_url","image_url":{"url":"https://example.com/a.b/c.gif"}}]}]})",
     {{"/contents/0/parts", R"([{"text":"What?"},
          {"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}},
          {"fileData":{"mimeType":"image/webp","fileUri":"https://example.com/cat.WEBP?size=2#x"}},
          {"fileData":{"mimeType":"image/jpeg","fileUri":"http://example.com/photo"}},
          {"fileData":{"mimeType":"image/gif","fileUri":"https://example.com/a.b/c.gif"}}])"}}},
    {"audio_and_file_inline",
     R"({"messages":[{"role":"user","content":[
          {"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}},
          {"type":"file","file":{"filename":"a.pdf","file_data":"data:application/pdf;base64,JVBERi0="}}]}]})",
     {{"/contents/0/parts", R"([{"inlineData":{"mimeType":"audio/wav","data":"UklGRg=="}},
          {"inlineData":{"mimeType":"application/pdf","data":"JVBERi0="}}])"}}},
    {"tool_calls_and_results_round_trip",
     R"({"messages":[
          {"role":"user","content":"Weather in Paris and Rome?"},
          {"role":"assistant","content":null,"tool_calls":[
            {"id":"call_a","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}},
            {"id":"call_b","type":"function","function":{"name":"time","arguments":""}}]},
          {"role":"tool","tool_call_id":"call_a","content":"{\"temp\":21}"},
          {"role":"tool","tool_call_id":"call_b","content":[{"type":"text","text":"noon"}]},
          {"role":"assistant","content":"Sunny, noon."}]})",
     {{"/contents", R"([
          {"role":"user","parts":[{"text":"Weather in Paris and Rome?"}]},
          {"role":"model","parts":[{"functionCall":{"name":"weather","args":{"city":"Paris"}}},
                                   {"functionCall":{"name":"time","args":{}}}]},
          {"role":"user","parts":[{"functionResponse":{"name":"weather","response":{"temp":21}}},
                                  {"functionResponse":{"name":"time","response":{"output":"noon"}}}]},
          {"role":"model","parts":[{"text":"Sunny, noon."}]}])"}}},
    {"assistant_text_and_call_in_one_turn",
     R"({"messages":[{"role":"user","content":"go"},
          {"role":"assistant","content":"Looking.","tool_calls":[
            {"id":"1","type":"function","function":{"name":"f","arguments":"{}"}}]},
          {"role":"tool","tool_call_id":"1","content":"[1,2]"}]})",
     {{"/contents/1/parts", R"([{"text":"Looking."},{"functionCall":{"name":"f","args":{}}}])"},
      {"/contents/2/parts/0/functionResponse/response", R"({"output":"[1,2]"})"}}},
    {"tools_and_auto",
     R"({"messages":[{"role":"user","content":"x"}],"tool_choice":"auto","tools":[
          {"type":"function","function":{"name":"weather","description":"Get weather","strict":true,
            "parameters":{"type":"object","additionalProperties":false,"required":["city"],
              "properties":{"city":{"type":"string","format":"uri"},"days":{"type":"integer","minimum":1}}}}},
          {"type":"function","function":{"name":"now","parameters":{"type":"object","properties":{}}}},
          {"type":"function","function":{"name":"ping"}}]})",
     {{"/tools", R"([{"functionDeclarations":[
          {"name":"weather","description":"Get weather","parameters":{"type":"object","required":["city"],
            "properties":{"city":{"type":"string"},"days":{"type":"integer","minimum":1}}}},
          {"name":"now"},{"name":"ping"}]}])"},
      {"/toolConfig", R"({"functionCallingConfig":{"mode":"AUTO"}})"}}},
    {"tool_choice_none",
     R"({"messages":[{"role":"user","content":"x"}],"tool_choice":"none",
         "tools":[{"type":"function","function":{"name":"f"}}]})",
     {{"/toolConfig/functionCallingConfig", R"({"mode":"NONE"})"}}},
    {"tool_choice_required",
     R"({"messages":[{"role":"user","content":"x"}],"tool_choice":"required",
         "tools":[{"type":"function","function":{"name":"f"}}]})",
     {{"/toolConfig/functionCallingConfig", R"({"mode":"ANY"})"}}},
    {"tool_choice_named",
     R"({"messages":[{"role":"user","content":"x"}],
         "tool_choice":{"type":"function","function":{"name":"g"}},
         "tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":"g"}}]})",
     {{"/toolConfig/functionCallingConfig", R"({"mode":"ANY","allowedFunctionNames":["g"]})"}}},
    {"tool_choice_without_tools_sends_no_config",
     R"({"messages":[{"role":"user","content":"x"}],"tool_choice":"none","tools":[]})",
     {{"/tools", "absent"}, {"/toolConfig", "absent"}}},
};

TEST(GeminiRequest, TranslatesEachField) {
  for (const auto& c : kRequestCases) {
    auto out = chat_to_gemini().request(c.body, {.model = "gemini-2.5-flash"});
    ASSERT_TRUE(out.has_value()) << c.name << ": " << out.error().message;
    EXPECT_EQ(out->path, "/v1beta/models/gemini-2.5-flash:generateContent") << c.name;
    EXPECT_FALSE(out->stream) << c.name;
    gemini_test::expect_fields(gemini_test::parse(out->body), c.expects, c.name);
  }
}

struct PathCase {
  std::string model;
  std::string body;
  std::string path;
  bool stream;
};

TEST(GeminiRequest, PathFromModelAndStream) {
  const std::vector<PathCase> cases = {
      {"gemini-2.5-pro", R"({"messages":[{"role":"user","content":"x"}]})",
       "/v1beta/models/gemini-2.5-pro:generateContent", false},
      {"gemini-2.5-pro", R"({"stream":true,"messages":[{"role":"user","content":"x"}]})",
       "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", true},
      {"gemini-2.5-pro", R"({"stream":false,"messages":[{"role":"user","content":"x"}]})",
       "/v1beta/models/gemini-2.5-pro:generateContent", false},
      {"models/gemini-2.0-flash", R"({"messages":[{"role":"user","content":"x"}]})",
       "/v1beta/models/gemini-2.0-flash:generateContent", false},
      {"", R"({"model":"a/b?c d","messages":[{"role":"user","content":"x"}]})",
       "/v1beta/models/a%2Fb%3Fc%20d:generateContent", false},
  };
  for (const auto& c : cases) {
    auto out = chat_to_gemini().request(c.body, {.model = c.model});
    ASSERT_TRUE(out.has_value()) << c.model << ": " << out.error().message;
    EXPECT_EQ(out->path, c.path);
    EXPECT_EQ(out->stream, c.stream);
  }
}

}  // namespace
}  // namespace rolter
