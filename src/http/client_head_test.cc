#include "http/client_head.h"

#include <gtest/gtest.h>

#include <string>

namespace rolter {
namespace {

namespace http = boost::beast::http;

std::string head_of(const HttpFields& upstream, const ClientHeadSpec& spec) {
  HeadString out;
  append_client_head(upstream, spec, out);
  return std::string(out);
}

TEST(ClientHead, DropsHopByHopAndLengthAddsVia) {
  HttpFields upstream;
  upstream.insert("Content-Type", "text/event-stream");
  upstream.insert("Content-Length", "10");
  upstream.insert("Connection", "X-Resp-Hop");
  upstream.insert("X-Resp-Hop", "1");
  upstream.insert("Keep-Alive", "timeout=5");
  upstream.insert("Upgrade", "foo");
  upstream.insert("Via", "1.0 cache");
  upstream.insert("Proxy-Connection", "x");
  upstream.insert("Transfer-Encoding", "chunked");
  upstream.insert("Via", "1.1 engine");
  upstream.insert("X-Request-Id", "abc");
  const std::string head =
      head_of(upstream, {.target = "a/up", .attempts = 2, .framing = BodyFraming::kChunked});
  EXPECT_EQ(head,
            "HTTP/1.1 200 OK\r\n"
            "Content-Type: text/event-stream\r\n"
            "X-Request-Id: abc\r\n"
            "Via: 1.0 cache, 1.1 engine, 1.1 rolter\r\n"
            "x-rolter-target: a/up\r\n"
            "x-rolter-attempts: 2\r\n"
            "Transfer-Encoding: chunked\r\n"
            "\r\n");
  const std::string plain = head_of(upstream, {.via = false, .target = "a/up"});
  EXPECT_NE(plain.find("Via: 1.0 cache\r\nVia: 1.1 engine\r\n"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("rolter\r\n"), std::string::npos) << plain;
}

TEST(ClientHead, TheRequestsIdReplacesTheUpstreams) {
  HttpFields upstream;
  upstream.insert("x-request-id", "engine-says");
  upstream.insert("Content-Type", "application/json");
  EXPECT_EQ(head_of(upstream, {.request_id = "r-1", .via = false, .target = "a/up"}),
            "HTTP/1.1 200 OK\r\n"
            "Content-Type: application/json\r\n"
            "x-request-id: r-1\r\n"
            "x-rolter-target: a/up\r\n"
            "x-rolter-attempts: 1\r\n"
            "Content-Length: 0\r\n"
            "\r\n");
}

TEST(ClientHead, RouteAndFallbacksWhenSet) {
  HttpFields none;
  EXPECT_EQ(head_of(none, {.via = false,
                           .target = "t",
                           .route = "b",
                           .fallbacks = "a,c",
                           .attempts = 3,
                           .content_length = 0}),
            "HTTP/1.1 200 OK\r\nx-rolter-target: t\r\nx-rolter-route: b\r\n"
            "x-rolter-fallbacks: a,c\r\nx-rolter-attempts: 3\r\nContent-Length: 0\r\n\r\n");
}

TEST(ClientHead, StatusReasonAndFraming) {
  HttpFields none;
  EXPECT_EQ(head_of(none, {.status = 429, .target = "t", .content_length = 17}),
            "HTTP/1.1 429 Too Many Requests\r\nVia: 1.1 rolter\r\nx-rolter-target: t\r\n"
            "x-rolter-attempts: 1\r\nContent-Length: 17\r\n\r\n");
  // The upstream's own reason passes, whatever the status.
  EXPECT_EQ(head_of(none, {.status = 299,
                           .reason = "Fine Anyway",
                           .via = false,
                           .target = "t",
                           .decision = R"({"chosen":0})",
                           .framing = BodyFraming::kNone,
                           .keep_alive = false}),
            "HTTP/1.1 299 Fine Anyway\r\nx-rolter-target: t\r\nx-rolter-attempts: 1\r\n"
            "x-rolter-decision: {\"chosen\":0}\r\nConnection: close\r\n\r\n");
  // HTTP/1.0: keep-alive must be asked for; a close-delimited body announces no length.
  EXPECT_EQ(head_of(none, {.version = 10, .via = false, .target = "t", .content_length = 2}),
            "HTTP/1.0 200 OK\r\nx-rolter-target: t\r\nx-rolter-attempts: 1\r\n"
            "Content-Length: 2\r\nConnection: keep-alive\r\n\r\n");
  EXPECT_EQ(head_of(none, {.version = 10,
                           .via = false,
                           .target = "t",
                           .framing = BodyFraming::kClose,
                           .keep_alive = false}),
            "HTTP/1.0 200 OK\r\nx-rolter-target: t\r\nx-rolter-attempts: 1\r\n\r\n");
}

}  // namespace
}  // namespace rolter
