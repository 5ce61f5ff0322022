// response() of both translators: whole answers, stop reasons, tool calls and usage with cache
// tokens, and answers that make no sense (502).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "translate/anthropic/anthropic_translators.h"
#include "translate/anthropic/test_checks.h"

namespace rolter::anthropic {
namespace {

struct Case {
  std::string name;
  const Translator* translator;
  std::string body;
  std::vector<FieldCheck> checks;
  bool fails = false;  // must be a 502
};

const std::vector<Case>& cases() {
  const Translator* to_chat = &chat_to_anthropic();  // answers Anthropic → chat completions
  const Translator* to_messages = &anthropic_to_chat();
  static const std::vector<Case> kCases = {
      {"MessageTextWithCacheUsage",
       to_chat,
       R"({"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet",
           "content":[{"type":"text","text":"Hello"},{"type":"text","text":" there"}],
           "stop_reason":"end_turn","stop_sequence":null,
           "usage":{"input_tokens":100,"cache_read_input_tokens":50,"cache_creation_input_tokens":25,"output_tokens":30}})",
       {{"/id", R"("msg_01")"},
        {"/object", R"("chat.completion")"},
        {"/created", "0"},
        {"/model", R"("claude-sonnet")"},
        {"/choices/0/index", "0"},
        {"/choices/0/message", R"({"role":"assistant","content":"Hello there"})"},
        {"/choices/0/finish_reason", R"("stop")"},
        {"/usage", R"({"prompt_tokens":175,"completion_tokens":30,"total_tokens":205,
                      "prompt_tokens_details":{"cached_tokens":50}})"}}},
      {"MessageTextAndTwoToolUses",
       to_chat,
       R"({"id":"msg_02","content":[{"type":"thinking","thinking":"x","signature":"s"},
           {"type":"text","text":"Let me check."},
           {"type":"tool_use","id":"toolu_1","name":"weather","input":{"city":"Paris"}},
           {"type":"tool_use","id":"toolu_2","name":"weather","input":{"city":"Rome"}}],
           "stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":5}})",
       {{"/model", R"("fallback-model")"},
        {"/choices/0/message",
         R"({"role":"assistant","content":"Let me check.","tool_calls":[
             {"id":"toolu_1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}},
             {"id":"toolu_2","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Rome\"}"}}]})"},
        {"/choices/0/finish_reason", R"("tool_calls")"},
        {"/usage/prompt_tokens", "10"},
        {"/usage/prompt_tokens_details/cached_tokens", "0"}}},
      {"MessageOnlyToolUse",
       to_chat,
       R"({"id":"m","content":[{"type":"tool_use","id":"t","name":"now","input":{}}],"stop_reason":"tool_use"})",
       {{"/choices/0/message/content", "null"},
        {"/choices/0/message/tool_calls/0/function/arguments", R"("{}")"}}},
      {"MessageMaxTokens",
       to_chat,
       R"({"content":[{"type":"text","text":"a"}],"stop_reason":"max_tokens"})",
       {{"/choices/0/finish_reason", R"("length")"}}},
      {"MessageStopSequence",
       to_chat,
       R"({"content":[],"stop_reason":"stop_sequence","stop_sequence":"END"})",
       {{"/choices/0/finish_reason", R"("stop")"}, {"/choices/0/message/content", R"("")"}}},
      {"MessageRefusal",
       to_chat,
       R"({"content":[],"stop_reason":"refusal"})",
       {{"/choices/0/finish_reason", R"("content_filter")"}}},
      {"MessageNotJson", to_chat, "<html>", {}, true},
      {"MessageNoContent", to_chat, R"({"id":"m"})", {}, true},
      {"MessageUnknownBlock", to_chat, R"({"content":[{"type":"server_tool_use"}]})", {}, true},

      {"ChatTextWithCachedTokens",
       to_messages,
       R"({"id":"chatcmpl-9","object":"chat.completion","created":1,"model":"llama-3",
           "choices":[{"index":0,"message":{"role":"assistant","content":"Hi!"},"finish_reason":"stop"}],
           "usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120,
                    "prompt_tokens_details":{"cached_tokens":40}}})",
       {{"/id", R"("msg_chatcmpl-9")"},
        {"/type", R"("message")"},
        {"/role", R"("assistant")"},
        {"/model", R"("llama-3")"},
        {"/content", R"([{"type":"text","text":"Hi!"}])"},
        {"/stop_reason", R"("end_turn")"},
        {"/stop_sequence", "null"},
        {"/usage", R"({"input_tokens":60,"output_tokens":20,"cache_read_input_tokens":40,
                      "cache_creation_input_tokens":0})"}}},
      {"ChatToolCalls",
       to_messages,
       R"({"id":"c2","model":"m","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant",
           "content":null,"tool_calls":[
             {"id":"call_a","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}},
             {"id":"call_b","type":"function","function":{"name":"now","arguments":""}}]}}],
           "usage":{"prompt_tokens":7,"completion_tokens":3}})",
       {{"/content",
         R"([{"type":"tool_use","id":"call_a","name":"weather","input":{"city":"Paris"}},
             {"type":"tool_use","id":"call_b","name":"now","input":{}}])"},
        {"/stop_reason", R"("tool_use")"},
        {"/usage",
         R"({"input_tokens":7,"output_tokens":3,"cache_read_input_tokens":0,"cache_creation_input_tokens":0})"}}},
      {"ChatLength",
       to_messages,
       R"({"id":"c","choices":[{"index":0,"finish_reason":"length","message":{"content":"abc"}}]})",
       {{"/stop_reason", R"("max_tokens")"}, {"/model", R"("fallback-model")"}}},
      {"ChatContentFilter",
       to_messages,
       R"({"id":"c","choices":[{"index":0,"finish_reason":"content_filter","message":{"content":null,"refusal":"No."}}]})",
       {{"/stop_reason", R"("refusal")"}, {"/content", R"([{"type":"text","text":"No."}])"}}},
      {"ChatBadArguments",
       to_messages,
       R"({"choices":[{"index":0,"message":{"tool_calls":[{"id":"x","function":{"name":"f","arguments":"{oops"}}]}}]})",
       {},
       true},
      {"ChatNoChoices", to_messages, R"({"id":"c","choices":[]})", {}, true},
      {"ChatNotObject", to_messages, R"("text")", {}, true},
  };
  return kCases;
}

TEST(Response, Table) {
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    auto result = c.translator->response(c.body, {.model = "fallback-model"});
    if (c.fails) {
      ASSERT_FALSE(result.has_value()) << *result;
      EXPECT_EQ(result.error().status, 502u);
      EXPECT_FALSE(result.error().message.empty());
      continue;
    }
    ASSERT_TRUE(result.has_value()) << result.error().message;
    expect_fields(parse_or_fail(*result, c.name), c.checks, c.name);
  }
}

}  // namespace
}  // namespace rolter::anthropic
