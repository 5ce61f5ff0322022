// anthropic_to_chat().stream(): chat.completion.chunk SSE → Anthropic events in Anthropic's
// order, checked event by event against events written out here, and identical at every piece
// size from 1 byte up.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "translate/anthropic/anthropic_translators.h"
#include "translate/anthropic/stream_test_util.h"

namespace rolter::anthropic {
namespace {

using nlohmann::json;

// One upstream chunk with one choice.
std::string chunk(const std::string& delta, const std::string& finish = "null",
                  const char* eol = "\n") {
  return std::string("data: ") +
         R"({"id":"chatcmpl-1","object":"chat.completion.chunk","created":5,"model":"llama-3",)" +
         R"("choices":[{"index":0,"delta":)" + delta + R"(,"finish_reason":)" + finish + "}]}" +
         eol + eol;
}

std::string usage_chunk(const char* eol = "\n") {
  return std::string("data: ") +
         R"({"id":"chatcmpl-1","object":"chat.completion.chunk","created":5,"model":"llama-3",)" +
         R"("choices":[],"usage":{"prompt_tokens":30,"completion_tokens":5,"total_tokens":35,)" +
         R"("prompt_tokens_details":{"cached_tokens":10}}})" + eol + eol;
}

const std::string kDone = "data: [DONE]\n\n";

using Expected = std::pair<std::string, std::string>;  // event name, data JSON

Expected message_start() {
  return {"message_start",
          R"({"type":"message_start","message":{"id":"msg_chatcmpl-1","type":"message",
      "role":"assistant","model":"llama-3","content":[],"stop_reason":null,"stop_sequence":null,
      "usage":{"input_tokens":0,"output_tokens":0,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}})"};
}
Expected text_start(int index) {
  return {"content_block_start", R"({"type":"content_block_start","index":)" +
                                     std::to_string(index) +
                                     R"(,"content_block":{"type":"text","text":""}})"};
}
Expected tool_start(int index, const std::string& id, const std::string& name) {
  return {"content_block_start", R"({"type":"content_block_start","index":)" +
                                     std::to_string(index) +
                                     R"(,"content_block":{"type":"tool_use","id":")" + id +
                                     R"(","name":")" + name + R"(","input":{}}})"};
}
Expected text_delta(int index, const std::string& text) {
  return {"content_block_delta", R"({"type":"content_block_delta","index":)" +
                                     std::to_string(index) +
                                     R"(,"delta":{"type":"text_delta","text":")" + text + R"("}})"};
}
Expected json_delta(int index, const std::string& fragment) {
  return {"content_block_delta",
          R"({"type":"content_block_delta","index":)" + std::to_string(index) +
              R"(,"delta":{"type":"input_json_delta","partial_json":")" + fragment + R"("}})"};
}
Expected block_stop(int index) {
  return {"content_block_stop",
          R"({"type":"content_block_stop","index":)" + std::to_string(index) + "}"};
}
Expected message_delta(const std::string& stop, int input, int output, int cached) {
  return {"message_delta", R"({"type":"message_delta","delta":{"stop_reason":")" + stop +
                               R"(","stop_sequence":null},"usage":{"input_tokens":)" +
                               std::to_string(input) + R"(,"output_tokens":)" +
                               std::to_string(output) + R"(,"cache_read_input_tokens":)" +
                               std::to_string(cached) + "}}"};
}
const Expected kMessageStop{"message_stop", R"({"type":"message_stop"})"};
Expected error(const std::string& message) {
  return {"error",
          R"({"type":"error","error":{"type":"api_error","message":")" + message + R"("}})"};
}

struct Case {
  std::string name;
  std::string upstream;
  End end;
  std::vector<Expected> expected;
  StreamTranslator::Usage usage;
};

std::vector<Case> cases() {
  const std::string role = chunk(R"({"role":"assistant","content":""})");
  const std::string tools =
      role + chunk(R"({"content":"Checking…"})") +
      chunk(
          R"({"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"weather","arguments":""}}]})",
          "null", "\r\n") +
      chunk(R"({"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]})", "null",
            "\r\n") +
      chunk(R"({"tool_calls":[{"index":0,"function":{"arguments":" \"Zürich\"}"}}]})", "null",
            "\r\n") +
      chunk(
          R"({"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"now","arguments":"{}"}}]})") +
      chunk("{}", R"("tool_calls")") + usage_chunk("\r\n") + kDone;
  return {
      {"Text",
       role + chunk(R"({"content":"Hé"})") + chunk(R"({"content":"llo 🎉 ✓"})") +
           chunk("{}", R"("stop")") + usage_chunk() + kDone,
       End::kClean,
       {message_start(), text_start(0), text_delta(0, "Hé"), text_delta(0, "llo 🎉 ✓"),
        block_stop(0), message_delta("end_turn", 20, 5, 10), kMessageStop},
       {.input_tokens = 30, .output_tokens = 5, .cached_tokens = 10}},
      {"TextThenTwoToolCalls",
       tools,
       End::kClean,
       {message_start(), text_start(0), text_delta(0, "Checking…"), block_stop(0),
        tool_start(1, "call_a", "weather"), json_delta(1, R"({\"city\":)"),
        json_delta(1, R"( \"Zürich\"})"), block_stop(1), tool_start(2, "call_b", "now"),
        json_delta(2, "{}"), block_stop(2), message_delta("tool_use", 20, 5, 10), kMessageStop},
       {.input_tokens = 30, .output_tokens = 5, .cached_tokens = 10}},
      {"DoneWithoutUsage",
       role + chunk(R"({"content":"x"})") + chunk("{}", R"("length")") + kDone,
       End::kClean,
       {message_start(), text_start(0), text_delta(0, "x"), block_stop(0),
        message_delta("max_tokens", 0, 0, 0), kMessageStop},
       {}},
      {"ErrorChunkMidStream",
       role + chunk(R"({"content":"x"})") +
           R"(data: {"error":{"message":"boom","type":"server_error"}})"
           "\n\n" +
           chunk(R"({"content":"y"})"),
       End::kClean,
       {message_start(), text_start(0), text_delta(0, "x"), error("boom")},
       {}},
      {"BrokenMidStream",
       role + chunk(R"({"content":"x"})"),
       End::kBroken,
       {message_start(), text_start(0), text_delta(0, "x"), error("the upstream stream broke")},
       {}},
      {"CleanEndAfterFinishWithoutDone",
       role + chunk(R"({"content":"x"})") + chunk("{}", R"("stop")"),
       End::kClean,
       {message_start(), text_start(0), text_delta(0, "x"), block_stop(0),
        error("the upstream stream ended before it finished")},
       {}},
      {"DoneWithoutFinish",
       role + chunk(R"({"content":"x"})") + kDone,
       End::kClean,
       {message_start(), text_start(0), text_delta(0, "x"),
        error("the upstream stream ended without a finish reason")},
       {}},
      {"InterleavedToolCalls",
       role +
           chunk(
               R"({"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":""}}]})") +
           chunk(
               R"({"tool_calls":[{"index":1,"id":"b","function":{"name":"g","arguments":""}}]})") +
           chunk(R"({"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]})"),
       End::kNone,
       {message_start(), tool_start(0, "a", "f"), block_stop(0), tool_start(1, "b", "g"),
        error("the upstream interleaved tool-call fragments")},
       {}},
  };
}

TEST(ChatStreamToMessages, Table) {
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    StreamTranslator::Usage usage;
    const std::string whole =
        translate_stream(anthropic_to_chat(), c.upstream, c.upstream.size(), c.end, &usage);
    const auto events = split_events(whole);
    ASSERT_EQ(events.size(), c.expected.size()) << whole;
    for (size_t i = 0; i < events.size(); ++i) {
      EXPECT_EQ(events[i].event, c.expected[i].first) << i;
      const auto expected = json::parse(c.expected[i].second, nullptr, false);
      ASSERT_FALSE(expected.is_discarded()) << c.expected[i].second;
      EXPECT_EQ(json::parse(events[i].data, nullptr, false), expected) << "event " << i;
    }
    EXPECT_EQ(usage.input_tokens, c.usage.input_tokens);
    EXPECT_EQ(usage.output_tokens, c.usage.output_tokens);
    EXPECT_EQ(usage.cached_tokens, c.usage.cached_tokens);
    for (size_t piece = 1; piece < c.upstream.size(); ++piece) {
      ASSERT_EQ(translate_stream(anthropic_to_chat(), c.upstream, piece, c.end), whole)
          << "piece " << piece;
    }
  }
}

// vLLM with continuous usage stats sends usage on every chunk: the end still waits for finish.
TEST(ChatStreamToMessages, UsageOnEveryChunkEndsAtFinish) {
  auto with_usage = [](const std::string& delta, const std::string& finish, int completion) {
    return R"(data: {"id":"c","model":"m","choices":[{"index":0,"delta":)" + delta +
           R"(,"finish_reason":)" + finish +
           R"(}],"usage":{"prompt_tokens":4,"completion_tokens":)" + std::to_string(completion) +
           "}}\n\n";
  };
  auto stream = anthropic_to_chat().stream({.model = "m"});
  std::string out;
  stream->feed(with_usage(R"({"content":"a"})", "null", 1), out);
  EXPECT_EQ(out.find("message_stop"), std::string::npos);
  stream->feed(with_usage("{}", R"("stop")", 2), out);
  stream->feed(kDone, out);
  stream->finish(true, out);
  const auto events = split_events(out);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().event, "message_stop");
  EXPECT_EQ(out.find("event: message_stop"), out.rfind("event: message_stop"));
  EXPECT_EQ(stream->usage().output_tokens, 2u);
  EXPECT_EQ(stream->usage().input_tokens, 4u);
}

}  // namespace
}  // namespace rolter::anthropic
