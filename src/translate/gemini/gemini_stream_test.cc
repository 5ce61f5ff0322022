// chat_to_gemini().stream(): Gemini SSE as chat.completion.chunk events, whatever the split.
#include "translate/gemini/gemini_translator.h"

#include "translate/gemini/gemini_test_util.h"

namespace rolter {
namespace {

using gemini_test::Json;

// Gemini's own framing is "\r\n\r\n"; UTF-8 of two, three and four bytes lands on split points.
const std::string kTextStream =
    "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"H\xC3\xA9llo "
    "\"}],\"role\":\"model\"},"
    "\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":5,\"totalTokenCount\":5},"
    "\"modelVersion\":\"gemini-2.5-flash\",\"responseId\":\"r1\"}\r\n\r\n"
    "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"w\xC3\xB6rld \xE2\x82\xAC "
    "\xF0\x9F\x8C\x8D\"}],"
    "\"role\":\"model\"},\"index\":0}],\"responseId\":\"r1\"}\r\n\r\n"
    "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"!\"}],\"role\":\"model\"},"
    "\"finishReason\":\"STOP\",\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":5,"
    "\"candidatesTokenCount\":4,\"thoughtsTokenCount\":2,\"cachedContentTokenCount\":3,"
    "\"totalTokenCount\":11},\"responseId\":\"r1\"}\r\n\r\n";

const std::string kToolStream =
    "data: "
    "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Checking.\"}],\"role\":\"model\"}}]}\n\n"
    "data: {\"candidates\":[{\"content\":{\"parts\":["
    "{\"functionCall\":{\"name\":\"weather\",\"args\":{\"city\":\"Z\xC3\xBCrich\"}}},"
    "{\"functionCall\":{\"id\":\"fc-9\",\"name\":\"time\",\"args\":{}}}],\"role\":\"model\"},"
    "\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":8,"
    "\"candidatesTokenCount\":6,\"totalTokenCount\":14}}\n\n";

Json chunk_choice(const Json& event) { return event["choices"][0]; }

TEST(GeminiStream, TextStreamAtEverySplit) {
  const std::string whole =
      gemini_test::run_stream(chat_to_gemini(), kTextStream, kTextStream.size());
  const auto events = gemini_test::stream_events(whole);
  ASSERT_EQ(events.size(), 7u) << whole;
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(events[i]["id"], "chatcmpl-r1");
    EXPECT_EQ(events[i]["object"], "chat.completion.chunk");
    EXPECT_EQ(events[i]["model"], "gemini-test");
    EXPECT_EQ(chunk_choice(events[i])["index"], 0);
  }
  EXPECT_EQ(chunk_choice(events[0])["delta"], Json::parse(R"({"role":"assistant","content":""})"));
  EXPECT_EQ(chunk_choice(events[1])["delta"]["content"], "H\xC3\xA9llo ");
  EXPECT_EQ(chunk_choice(events[2])["delta"]["content"],
            "w\xC3\xB6rld \xE2\x82\xAC \xF0\x9F\x8C\x8D");
  EXPECT_EQ(chunk_choice(events[3])["delta"]["content"], "!");
  EXPECT_TRUE(chunk_choice(events[3])["finish_reason"].is_null());
  EXPECT_EQ(chunk_choice(events[4])["delta"], Json::object());
  EXPECT_EQ(chunk_choice(events[4])["finish_reason"], "stop");
  EXPECT_EQ(events[5]["choices"], Json::array());
  EXPECT_EQ(events[5]["usage"], Json::parse(R"({"prompt_tokens":5,"completion_tokens":6,
      "total_tokens":11,"prompt_tokens_details":{"cached_tokens":3},
      "completion_tokens_details":{"reasoning_tokens":2}})"));
  EXPECT_EQ(events[6], "[DONE]");
  for (size_t piece = 1; piece < kTextStream.size(); ++piece) {
    ASSERT_EQ(gemini_test::run_stream(chat_to_gemini(), kTextStream, piece), whole)
        << "piece " << piece;
  }
}

TEST(GeminiStream, ReportsUsageSeen) {
  auto stream = chat_to_gemini().stream({.model = "m"});
  std::string out;
  stream->feed(kTextStream, out);
  EXPECT_EQ(stream->usage().input_tokens, 5u);
  EXPECT_EQ(stream->usage().output_tokens, 6u);
  EXPECT_EQ(stream->usage().cached_tokens, 3u);
}

TEST(GeminiStream, FunctionCallsAtEverySplit) {
  const std::string whole =
      gemini_test::run_stream(chat_to_gemini(), kToolStream, kToolStream.size());
  const auto events = gemini_test::stream_events(whole);
  ASSERT_EQ(events.size(), 7u) << whole;
  EXPECT_EQ(events[0]["id"], "chatcmpl-gemini");
  EXPECT_EQ(chunk_choice(events[0])["delta"]["role"], "assistant");
  EXPECT_EQ(chunk_choice(events[1])["delta"]["content"], "Checking.");
  EXPECT_EQ(chunk_choice(events[2])["delta"]["tool_calls"],
            Json::parse(R"([{"index":0,"id":"call_0_0",
      "type":"function","function":{"name":"weather","arguments":"{\"city\":\"Z\u00fcrich\"}"}}])"));
  EXPECT_EQ(chunk_choice(events[3])["delta"]["tool_calls"], Json::parse(R"([{"index":1,"id":"fc-9",
      "type":"function","function":{"name":"time","arguments":"{}"}}])"));
  EXPECT_EQ(chunk_choice(events[4])["finish_reason"], "tool_calls");
  EXPECT_EQ(events[5]["usage"]["total_tokens"], 14);
  EXPECT_EQ(events[6], "[DONE]");
  for (size_t piece = 1; piece < kToolStream.size(); ++piece) {
    ASSERT_EQ(gemini_test::run_stream(chat_to_gemini(), kToolStream, piece), whole)
        << "piece " << piece;
  }
}

TEST(GeminiStream, BlockedPrompt) {
  const std::string upstream =
      "data: "
      "{\"promptFeedback\":{\"blockReason\":\"SAFETY\"},\"usageMetadata\":{\"promptTokenCount\":4,"
      "\"totalTokenCount\":4}}\r\n\r\n";
  const auto events =
      gemini_test::stream_events(gemini_test::run_stream(chat_to_gemini(), upstream, 7));
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(chunk_choice(events[0])["delta"]["role"], "assistant");
  EXPECT_EQ(chunk_choice(events[1])["finish_reason"], "content_filter");
  EXPECT_EQ(events[2]["usage"]["prompt_tokens"], 4);
  EXPECT_EQ(events[3], "[DONE]");
}

struct BrokenCase {
  std::string name;
  std::string upstream;
  bool clean;
  size_t events_before_error;
  unsigned status_hint;  // 0: don't check the message
  std::string message;
};

TEST(GeminiStream, BrokenStreamsEndInAnErrorWithoutDone) {
  const std::string first_text =
      "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hi\"}]}}]}\n\n";
  const std::vector<BrokenCase> cases = {
      {"no_finish_reason", first_text, true, 2, 0, "Gemini's stream ended before it finished"},
      {"connection_broke", kTextStream, false, 5, 0, "Gemini's stream broke before it finished"},
      {"nothing_at_all", "", true, 0, 0, "Gemini's stream ended before it finished"},
      {"error_object_in_stream",
       first_text +
           "data: {\"error\":{\"code\":503,\"message\":\"The model is overloaded.\","
           "\"status\":\"UNAVAILABLE\"}}\n\n" +
           kTextStream,
       true, 2, 503, "The model is overloaded."},
      {"not_json", first_text + "data: {oops\n\n", true, 2, 0,
       "Gemini sent a stream event that is not a JSON object"},
      {"half_an_event", kTextStream.substr(0, kTextStream.size() - 30), true, 3, 0,
       "Gemini's stream ended before it finished"},
  };
  for (const auto& c : cases) {
    for (size_t piece : {size_t{1}, size_t{5}, c.upstream.size() + 1}) {
      const std::string out = gemini_test::run_stream(chat_to_gemini(), c.upstream, piece, c.clean);
      const auto events = gemini_test::stream_events(out);
      ASSERT_EQ(events.size(), c.events_before_error + 1) << c.name << ": " << out;
      const Json& error = events.back()["error"];
      ASSERT_TRUE(error.is_object()) << c.name << ": " << out;
      EXPECT_EQ(error["message"], c.message) << c.name;
      if (c.status_hint == 503) {
        EXPECT_EQ(error["type"], "service_unavailable") << c.name;
      }
      EXPECT_EQ(out.find("[DONE]"), std::string::npos) << c.name;
    }
  }
}

TEST(GeminiStream, FinishIsCalledOnce) {
  auto stream = chat_to_gemini().stream({.model = "m"});
  std::string out;
  stream->feed(kToolStream, out);
  stream->finish(true, out);
  const size_t size = out.size();
  stream->finish(false, out);
  stream->feed(kToolStream, out);
  EXPECT_EQ(out.size(), size);
}

TEST(GeminiStream, SeveralCandidatesFinishEach) {
  const std::string upstream =
      "data: {\"candidates\":[{\"index\":0,\"content\":{\"parts\":[{\"text\":\"a\"}]}},"
      "{\"index\":1,\"content\":{\"parts\":[{\"text\":\"b\"}]}}]}\n\n"
      "data: {\"candidates\":[{\"index\":0,\"finishReason\":\"STOP\"}]}\n\n";
  // Choice 1 never finished: broken.
  auto events = gemini_test::stream_events(gemini_test::run_stream(chat_to_gemini(), upstream, 3));
  ASSERT_FALSE(events.empty());
  EXPECT_TRUE(events.back().contains("error"));
  const std::string finished =
      upstream + "data: {\"candidates\":[{\"index\":1,\"finishReason\":\"MAX_TOKENS\"}]}\n\n";
  events = gemini_test::stream_events(gemini_test::run_stream(chat_to_gemini(), finished, 3));
  ASSERT_EQ(events.size(), 8u);
  EXPECT_EQ(chunk_choice(events[1])["index"], 0);
  EXPECT_EQ(chunk_choice(events[2])["index"], 1);
  EXPECT_EQ(chunk_choice(events[3])["delta"]["content"], "b");
  EXPECT_EQ(chunk_choice(events[5])["finish_reason"], "length");
  EXPECT_EQ(events[7], "[DONE]");
}

}  // namespace
}  // namespace rolter
