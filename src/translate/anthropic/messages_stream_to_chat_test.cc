// chat_to_anthropic().stream(): Anthropic SSE → chat.completion.chunk events, checked event by
// event against chunks written out here, and identical at every piece size from 1 byte up (so
// across splits inside UTF-8 sequences and inside "\r\n").
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "translate/anthropic/anthropic_translators.h"
#include "translate/anthropic/stream_test_util.h"

namespace rolter::anthropic {
namespace {

using nlohmann::json;

std::string sse(const std::string& event, const std::string& data, const char* eol = "\n") {
  return "event: " + event + eol + "data: " + data + eol + eol;
}

// An expected chunk with one choice.
std::string chunk(const std::string& delta, const std::string& finish = "null") {
  return R"({"id":"msg_01","object":"chat.completion.chunk","created":0,"model":"claude-sonnet",
             "choices":[{"index":0,"delta":)" +
         delta + R"(,"logprobs":null,"finish_reason":)" + finish + "}]}";
}

std::string usage_chunk(int prompt, int completion, int cached) {
  return R"({"id":"msg_01","object":"chat.completion.chunk","created":0,"model":"claude-sonnet","choices":[],
             "usage":{"prompt_tokens":)" +
         std::to_string(prompt) + R"(,"completion_tokens":)" + std::to_string(completion) +
         R"(,"total_tokens":)" + std::to_string(prompt + completion) +
         R"(,"prompt_tokens_details":{"cached_tokens":)" + std::to_string(cached) + "}}}";
}

// One line: an SSE data line cannot hold a newline.
const std::string kStart =
    R"({"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant",)"
    R"("model":"claude-sonnet","content":[],"stop_reason":null,"usage":{"input_tokens":25,)"
    R"("cache_read_input_tokens":10,"cache_creation_input_tokens":5,"output_tokens":1}}})";

std::string text_delta(int index, const std::string& text) {
  return R"({"type":"content_block_delta","index":)" + std::to_string(index) +
         R"(,"delta":{"type":"text_delta","text":")" + text + R"("}})";
}

std::string json_delta(int index, const std::string& fragment) {
  return R"({"type":"content_block_delta","index":)" + std::to_string(index) +
         R"(,"delta":{"type":"input_json_delta","partial_json":")" + fragment + R"("}})";
}

std::string block_stop(int index) {
  return R"({"type":"content_block_stop","index":)" + std::to_string(index) + "}";
}

std::string message_delta(const std::string& stop, int output) {
  return R"({"type":"message_delta","delta":{"stop_reason":")" + stop +
         R"(","stop_sequence":null},"usage":{"output_tokens":)" + std::to_string(output) + "}}";
}

const std::string kStop = R"({"type":"message_stop"})";
const std::string kTextStart =
    R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})";
const std::string kRole = R"({"role":"assistant","content":""})";

struct Case {
  std::string name;
  std::string upstream;
  End end;
  std::vector<std::string> expected;  // each event's data: JSON, or "[DONE]"
  StreamTranslator::Usage usage;
};

std::vector<Case> cases() {
  const std::string text_stream =
      sse("message_start", kStart) + sse("ping", R"({"type":"ping"})") +
      sse("content_block_start", kTextStart) + sse("content_block_delta", text_delta(0, "Hé")) +
      sse("content_block_delta", text_delta(0, "llo 🎉 ✓")) +
      sse("content_block_stop", block_stop(0)) +
      sse("message_delta", message_delta("end_turn", 12)) + sse("message_stop", kStop);
  const char* crlf = "\r\n";
  const std::string tool_stream =
      sse("message_start", kStart, crlf) + sse("content_block_start", kTextStart, crlf) +
      sse("content_block_delta", text_delta(0, "Checking…"), crlf) +
      sse("content_block_stop", block_stop(0), crlf) +
      sse("content_block_start",
          R"({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"weather","input":{}}})",
          crlf) +
      sse("content_block_delta", json_delta(1, R"({\"city\":)"), crlf) +
      sse("content_block_delta", json_delta(1, R"( \"Zürich\"})"), crlf) +
      sse("content_block_stop", block_stop(1), crlf) +
      sse("content_block_start",
          R"({"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_2","name":"now","input":{}}})",
          crlf) +
      sse("content_block_delta", json_delta(2, ""), crlf) +
      sse("content_block_delta", json_delta(2, "{}"), crlf) +
      sse("content_block_stop", block_stop(2), crlf) +
      sse("message_delta", message_delta("tool_use", 40), crlf) + sse("message_stop", kStop, crlf);
  const std::string opening = sse("message_start", kStart) +
                              sse("content_block_start", kTextStart) +
                              sse("content_block_delta", text_delta(0, "Par"));
  return {
      {"Text",
       text_stream,
       End::kClean,
       {chunk(kRole), chunk(R"({"content":"Hé"})"), chunk(R"({"content":"llo 🎉 ✓"})"),
        chunk("{}", R"("stop")"), usage_chunk(40, 12, 10), "[DONE]"},
       {.input_tokens = 40, .output_tokens = 12, .cached_tokens = 10}},
      {"TextThenTwoToolCallsWithCrlf",
       tool_stream,
       End::kClean,
       {chunk(kRole), chunk(R"({"content":"Checking…"})"),
        chunk(
            R"({"tool_calls":[{"index":0,"id":"toolu_1","type":"function","function":{"name":"weather","arguments":""}}]})"),
        chunk(R"({"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]})"),
        chunk(R"({"tool_calls":[{"index":0,"function":{"arguments":" \"Zürich\"}"}}]})"),
        chunk(
            R"({"tool_calls":[{"index":1,"id":"toolu_2","type":"function","function":{"name":"now","arguments":""}}]})"),
        chunk(R"({"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]})"),
        chunk("{}", R"("tool_calls")"), usage_chunk(40, 40, 10), "[DONE]"},
       {.input_tokens = 40, .output_tokens = 40, .cached_tokens = 10}},
      {"UpstreamErrorMidStream",
       opening +
           sse("error",
               R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})") +
           sse("content_block_delta", text_delta(0, "is")),
       End::kClean,
       {chunk(kRole), chunk(R"({"content":"Par"})"),
        R"({"error":{"message":"Overloaded","type":"service_unavailable","param":null,"code":null}})"},
       {.input_tokens = 40, .output_tokens = 1, .cached_tokens = 10}},
      {"BrokenMidStream",
       opening,
       End::kBroken,
       {chunk(kRole), chunk(R"({"content":"Par"})"),
        R"({"error":{"message":"the upstream stream broke","type":"server_error","param":null,"code":null}})"},
       {.input_tokens = 40, .output_tokens = 1, .cached_tokens = 10}},
      {"CleanEndWithoutMessageStop",
       opening + sse("message_delta", message_delta("max_tokens", 3)),
       End::kClean,
       {chunk(kRole), chunk(R"({"content":"Par"})"), chunk("{}", R"("length")"),
        R"({"error":{"message":"the upstream stream ended before message_stop","type":"server_error","param":null,"code":null}})"},
       {.input_tokens = 40, .output_tokens = 3, .cached_tokens = 10}},
      {"UnreadableEvent",
       opening + "data: {oops\n\n",
       End::kClean,
       {chunk(kRole), chunk(R"({"content":"Par"})"),
        R"({"error":{"message":"the upstream sent an unreadable event","type":"server_error","param":null,"code":null}})"},
       {.input_tokens = 40, .output_tokens = 1, .cached_tokens = 10}},
  };
}

TEST(MessagesStreamToChat, Table) {
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    StreamTranslator::Usage usage;
    const std::string whole =
        translate_stream(chat_to_anthropic(), c.upstream, c.upstream.size(), c.end, &usage);
    const auto events = split_events(whole);
    ASSERT_EQ(events.size(), c.expected.size()) << whole;
    for (size_t i = 0; i < events.size(); ++i) {
      EXPECT_EQ(events[i].event, "") << i;
      if (c.expected[i] == "[DONE]") {
        EXPECT_EQ(events[i].data, "[DONE]");
        continue;
      }
      const auto expected = json::parse(c.expected[i], nullptr, false);
      ASSERT_FALSE(expected.is_discarded()) << c.expected[i];
      EXPECT_EQ(json::parse(events[i].data, nullptr, false), expected) << "event " << i;
    }
    EXPECT_EQ(usage.input_tokens, c.usage.input_tokens);
    EXPECT_EQ(usage.output_tokens, c.usage.output_tokens);
    EXPECT_EQ(usage.cached_tokens, c.usage.cached_tokens);
    for (size_t piece = 1; piece < c.upstream.size(); ++piece) {
      ASSERT_EQ(translate_stream(chat_to_anthropic(), c.upstream, piece, c.end), whole)
          << "piece " << piece;
    }
  }
}

TEST(MessagesStreamToChat, NothingAfterTheEnd) {
  auto stream = chat_to_anthropic().stream({.model = "m"});
  std::string out;
  stream->feed(sse("message_start", kStart) + sse("message_stop", kStop), out);
  const size_t size = out.size();
  stream->feed(sse("content_block_delta", text_delta(0, "late")), out);
  stream->finish(false, out);
  EXPECT_EQ(out.size(), size);
  EXPECT_EQ(out.substr(out.size() - 14), "data: [DONE]\n\n");
}

TEST(MessagesStreamToChat, ModelFallsBackToOptions) {
  auto stream = chat_to_anthropic().stream({.model = "options-model"});
  std::string out;
  stream->feed(sse("message_start", R"({"type":"message_start","message":{"id":"msg_9"}})"), out);
  const auto events = split_events(out);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(json::parse(events[0].data)["model"], "options-model");
  EXPECT_EQ(json::parse(events[0].data)["id"], "msg_9");
}

}  // namespace
}  // namespace rolter::anthropic
