#include "proxy/stream_error.h"

#include <gtest/gtest.h>

#include "proxy/error_response.h"

namespace rolter {
namespace {

struct Case {
  ApiKind kind;
  std::optional<uint64_t> last_sequence;
  const char* expected;
};

TEST(StreamError, ShapedForEachApi) {
  const Case cases[] = {
      {ApiKind::kChatCompletions, std::nullopt,
       "data: {\"error\":{\"message\":\"cut\",\"type\":\"api_error\",\"param\":null,"
       "\"code\":\"upstream_error\"}}\n\n"},
      {ApiKind::kCompletions, 7,
       "data: {\"error\":{\"message\":\"cut\",\"type\":\"api_error\",\"param\":null,"
       "\"code\":\"upstream_error\"}}\n\n"},
      {ApiKind::kResponses, 41,
       "event: error\ndata: {\"type\":\"error\",\"code\":\"upstream_error\",\"message\":\"cut\","
       "\"param\":null,\"sequence_number\":42}\n\n"},
      {ApiKind::kResponses, std::nullopt,
       "event: error\ndata: {\"type\":\"error\",\"code\":\"upstream_error\",\"message\":\"cut\","
       "\"param\":null,\"sequence_number\":0}\n\n"},
      {ApiKind::kMessages, std::nullopt,
       "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\","
       "\"message\":\"cut\"}}\n\n"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(stream_error_event(c.kind, "cut", c.last_sequence), c.expected);
  }
}

TEST(StreamError, CarriesTheRequestId) {
  EXPECT_EQ(stream_error_event(ApiKind::kChatCompletions, "cut", std::nullopt, "r-1"),
            "data: {\"error\":{\"message\":\"cut\",\"type\":\"api_error\",\"param\":null,"
            "\"code\":\"upstream_error\",\"request_id\":\"r-1\"}}\n\n");
  EXPECT_EQ(stream_error_event(ApiKind::kResponses, "cut", 1, "r-1"),
            "event: error\ndata: {\"type\":\"error\",\"code\":\"upstream_error\",\"message\":"
            "\"cut\",\"param\":null,\"sequence_number\":2,\"request_id\":\"r-1\"}\n\n");
  EXPECT_EQ(stream_error_event(ApiKind::kMessages, "cut", std::nullopt, "r\"2"),
            "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\","
            "\"message\":\"cut\",\"request_id\":\"r\\\"2\"}}\n\n");
}

TEST(ErrorBody, CarriesTheRequestIdInEitherShape) {
  const ApiError error{.status = 404, .message = "no such model", .code = "model_not_found"};
  EXPECT_EQ(error_body(ErrorStyle::kOpenAi, error),
            R"({"error":{"message":"no such model","type":"invalid_request_error",)"
            R"("param":null,"code":"model_not_found"}})");
  EXPECT_EQ(error_body(ErrorStyle::kOpenAi, error, "r-9"),
            R"({"error":{"message":"no such model","type":"invalid_request_error",)"
            R"("param":null,"code":"model_not_found","request_id":"r-9"}})");
  EXPECT_EQ(error_body(ErrorStyle::kAnthropic, error, "r-9"),
            R"({"type":"error","error":{"type":"not_found_error","message":"no such model",)"
            R"("request_id":"r-9"}})");
}

}  // namespace
}  // namespace rolter
