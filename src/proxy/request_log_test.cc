// The access log's line (SPEC §17): every field, what is left out when it has no value, the
// attempts with their reasons, and JSON escaping of everything a client chose.
#include "proxy/request_log.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <string>

namespace rolter {
namespace {

using nlohmann::json;

json parsed(const RequestLogLine& line) {
  const std::string text = format_request_line(line, 1700000000123);
  EXPECT_EQ(text.find('\n'), std::string::npos) << "one line: " << text;
  auto value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(value.is_discarded()) << text;
  return value;
}

TEST(RequestLog, EveryField) {
  const std::array<AttemptEntry, 3> tries = {{
      {.endpoint = "http://10.0.0.1:8000",
       .ms = 1.5f,
       .status = 0,
       .reason = AttemptReason::kConnectRefused},
      {.endpoint = "http://10.0.0.2:8000",
       .ms = 2,
       .status = 503,
       .reason = AttemptReason::kStatus},
      {.endpoint = "http://10.0.0.3:8000/v1", .ms = 40, .status = 200},
  }};
  RequestLogLine line{.request_id = "req-1",
                      .trace_id = "4bf92f3577b34da6a3ce929d0e0e4736",
                      .client = "192.0.2.7",
                      .method = "POST",
                      .path = "/v1/chat/completions",
                      .model = "qwen3",
                      .stream = true,
                      .key = "team-a-key",
                      .team = "team-a",
                      .route = "chat",
                      .fallbacks = "old",
                      .target = "engine-2/qwen3-8b",
                      .endpoint = "http://10.0.0.3:8000/v1",
                      .attempts = 3,
                      .tries = tries,
                      .status = 200,
                      .upstream_status = 200,
                      .bytes_in = 123,
                      .bytes_out = 4567,
                      .duration_s = 0.0425,
                      .ttft_s = 0.0121,
                      .tokens_in = 10,
                      .tokens_out = 20,
                      .complete = false,
                      .usage_estimated = true,
                      .limited = ""};
  const json j = parsed(line);
  const json expected = json::parse(R"({
    "ts_ms": 1700000000123, "level": "info", "event": "request",
    "request_id": "req-1", "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736",
    "client": "192.0.2.7", "method": "POST", "path": "/v1/chat/completions", "model": "qwen3",
    "stream": true, "key": "team-a-key", "team": "team-a", "route": "chat", "fallbacks": "old",
    "target": "engine-2/qwen3-8b", "endpoint": "http://10.0.0.3:8000/v1",
    "attempts": 3, "status": 200, "upstream_status": 200,
    "tries": [
      {"endpoint": "http://10.0.0.1:8000", "reason": "connect_refused", "ms": 1.5},
      {"endpoint": "http://10.0.0.2:8000", "status": 503, "reason": "status_503", "ms": 2.0},
      {"endpoint": "http://10.0.0.3:8000/v1", "status": 200, "ms": 40.0}
    ],
    "bytes_in": 123, "bytes_out": 4567, "duration_ms": 42.5, "ttft_ms": 12.1,
    "tokens_in": 10, "tokens_out": 20, "complete": false, "usage_estimated": true
  })");
  EXPECT_EQ(j, expected) << j.dump(2);
}

// The gateway's own answer: no upstream, no attempt, nothing optional.
TEST(RequestLog, FieldsWithoutAValueAreLeftOut) {
  const json j = parsed(RequestLogLine{
      .route = "m", .target = "none", .status = 503, .duration_s = 0.001, .limited = "budget"});
  for (const char* absent : {"request_id", "trace_id", "client", "method", "path", "model", "key",
                             "team", "fallbacks", "endpoint", "upstream_status", "tries", "ttft_ms",
                             "tokens_in", "tokens_out", "complete", "usage_estimated"}) {
    EXPECT_FALSE(j.contains(absent)) << absent << " in " << j.dump();
  }
  EXPECT_EQ(j["stream"], false);
  EXPECT_EQ(j["attempts"], 0);
  EXPECT_EQ(j["bytes_in"], 0);
  EXPECT_EQ(j["bytes_out"], 0);
  EXPECT_EQ(j["limited"], "budget");
}

TEST(RequestLog, EveryReasonHasAName) {
  struct Case {
    AttemptReason reason;
    uint16_t status;
    const char* name;
  };
  const Case cases[] = {
      {AttemptReason::kConnectRefused, 0, "connect_refused"},
      {AttemptReason::kConnectTimeout, 0, "connect_timeout"},
      {AttemptReason::kConnectError, 0, "connect_error"},
      {AttemptReason::kSendError, 0, "send_error"},
      {AttemptReason::kFirstByteTimeout, 0, "first_byte_timeout"},
      {AttemptReason::kDeadline, 0, "deadline"},
      {AttemptReason::kResponseError, 0, "response_error"},
      {AttemptReason::kProtocolError, 101, "protocol_error"},
      {AttemptReason::kStatus, 429, "status_429"},
      {AttemptReason::kUpstreamAuth, 401, "upstream_auth"},
      {AttemptReason::kContextLength, 400, "context_length"},
      {AttemptReason::kContentFilter, 400, "content_filter"},
      {AttemptReason::kInternal, 0, "internal"},
      {AttemptReason::kKvTransfer, 200, "kv_transfer"},
      {AttemptReason::kDisplaced, 0, "displaced"},
  };
  for (const auto& c : cases) {
    const AttemptEntry entry{.endpoint = "http://e:1", .status = c.status, .reason = c.reason};
    const json j =
        parsed(RequestLogLine{.route = "m", .target = "none", .attempts = 1, .tries = {&entry, 1}});
    EXPECT_EQ(j["tries"][0]["reason"], c.name);
    if (c.status != 0) {
      EXPECT_EQ(j["tries"][0]["status"], c.status);
    }
  }
}

// A client chooses its path and model: quotes, backslashes, control characters, bytes that are
// not UTF-8 and an attempt to end the line must all stay inside one valid JSON string.
TEST(RequestLog, WhatAClientChoseIsEscaped) {
  struct Case {
    std::string raw;
    std::string logged;  // as JSON reads it back
  };
  const Case cases[] = {
      {"plain", "plain"},
      {R"(a"b\c)", R"(a"b\c)"},
      {"line\nbreak\r\n{\"event\":\"forged\"}", "line\nbreak\r\n{\"event\":\"forged\"}"},
      {std::string("nul\0tab\t", 8), std::string("nul\0tab\t", 8)},
      {"caf\xc3\xa9 \xf0\x9f\x9a\x80", "caf\xc3\xa9 \xf0\x9f\x9a\x80"},
      {"bad\xff\xfe utf8 \xc3", "bad\xef\xbf\xbd\xef\xbf\xbd utf8 \xef\xbf\xbd"},
      {"\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
  };
  for (const auto& c : cases) {
    const json j = parsed(RequestLogLine{.request_id = c.raw,
                                         .client = c.raw,
                                         .method = c.raw,
                                         .path = c.raw,
                                         .model = c.raw,
                                         .route = "m",
                                         .target = "none"});
    for (const char* field : {"client", "method", "path", "model", "request_id"}) {
      EXPECT_EQ(j[field], c.logged) << field;
    }
    EXPECT_EQ(j["event"], "request");
  }
}

TEST(RequestLog, OffWritesNothingAndSkipsTheLine) {
  set_access_log(false);
  EXPECT_EQ(access_log_destination(), "off");
  // Remembered, not applied, while the override holds.
  ASSERT_TRUE(set_access_log_destination("stderr"));
  EXPECT_EQ(access_log_destination(), "off");
  set_access_log(true);
  EXPECT_EQ(access_log_destination(), "stderr");
  ASSERT_TRUE(set_access_log_destination("off"));
  EXPECT_EQ(access_log_destination(), "off");
  ASSERT_TRUE(set_access_log_destination("stderr"));
  EXPECT_FALSE(set_access_log_destination("/nonexistent-dir/access.log"));
  EXPECT_EQ(access_log_destination(), "stderr") << "a destination that fails changes nothing";
}

}  // namespace
}  // namespace rolter
