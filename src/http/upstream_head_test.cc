#include "http/upstream_head.h"

#include <gtest/gtest.h>

#include <vector>

#include <string>

namespace rolter {
namespace {
namespace http = boost::beast::http;

UpstreamHeadSpec spec() {
  UpstreamHeadSpec s;
  s.method = "POST";
  s.base_path = "/engine";
  s.target = "/v1/chat/completions";
  s.host_header = "engine:8001";
  s.content_length = 17;
  s.client_ip = "192.0.2.7";
  return s;
}

std::string head(const UpstreamHeadSpec& s, const HttpFields& client) {
  HeadString out;
  append_upstream_head(s, client, out);
  return std::string(out);
}

TEST(UpstreamHead, RequestLineHostLengthAndEncoding) {
  HttpFields client;
  client.insert("Host", "gateway");
  client.insert("Content-Length", "99");
  client.insert("Accept-Encoding", "gzip, br");
  client.insert("Content-Type", "application/json");
  EXPECT_EQ(head(spec(), client),
            "POST /engine/v1/chat/completions HTTP/1.1\r\n"
            "Host: engine:8001\r\n"
            "Content-Length: 17\r\n"
            "Accept-Encoding: identity\r\n"
            "Content-Type: application/json\r\n"
            "X-Forwarded-For: 192.0.2.7\r\n"
            "X-Forwarded-Proto: http\r\n"
            "Via: 1.1 rolter\r\n\r\n");
}

struct KeyCase {
  const char* name;
  std::string_view key;
  UpstreamHeadSpec::KeyField field;
  const char* expect_line;  // nullptr: no credential line
};

TEST(UpstreamHead, ProviderKeyNeverTheClients) {
  const KeyCase cases[] = {
      {"openai kind", "sk-provider", UpstreamHeadSpec::KeyField::kBearer,
       "Authorization: Bearer sk-provider\r\n"},
      {"anthropic kind", "sk-ant", UpstreamHeadSpec::KeyField::kXApiKey, "x-api-key: sk-ant\r\n"},
      {"gemini kind", "sk-goog", UpstreamHeadSpec::KeyField::kGoogApiKey,
       "x-goog-api-key: sk-goog\r\n"},
      {"no provider key", "", UpstreamHeadSpec::KeyField::kBearer, nullptr},
  };
  HttpFields client;
  client.insert("Authorization", "Bearer sk-client");
  client.insert("x-api-key", "sk-client");
  client.insert("x-goog-api-key", "sk-client");
  for (const auto& c : cases) {
    auto s = spec();
    s.api_key = c.key;
    s.key_field = c.field;
    const std::string h = head(s, client);
    EXPECT_EQ(h.find("sk-client"), std::string::npos) << c.name;
    if (c.expect_line != nullptr) {
      EXPECT_NE(h.find(c.expect_line), std::string::npos) << c.name << "\n" << h;
    } else {
      EXPECT_EQ(h.find("Authorization"), std::string::npos) << c.name;
      EXPECT_EQ(h.find("x-api-key"), std::string::npos) << c.name;
      EXPECT_EQ(h.find("x-goog-api-key"), std::string::npos) << c.name;
    }
  }
}

TEST(UpstreamHead, FixedFieldsReplaceTheClientsOfTheSameName) {
  const std::vector<std::pair<std::string, std::string>> fixed = {
      {"api-version", "2024-10-21"}, {"anthropic-version", "2023-06-01"}};
  HttpFields client;
  client.insert("Anthropic-Version", "1999-01-01");
  client.insert("x-trace", "t1");
  auto s = spec();
  s.fixed_fields = fixed;
  const std::string h = head(s, client);
  EXPECT_NE(h.find("api-version: 2024-10-21\r\n"), std::string::npos) << h;
  EXPECT_NE(h.find("anthropic-version: 2023-06-01\r\n"), std::string::npos) << h;
  EXPECT_EQ(h.find("1999-01-01"), std::string::npos) << h;
  EXPECT_NE(h.find("x-trace: t1\r\n"), std::string::npos) << h;
}

TEST(UpstreamHead, TheRequestsIdAndTraceparentReplaceTheClients) {
  HttpFields client;
  client.insert("X-Request-ID", "client-id");
  client.insert("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  client.insert("tracestate", "v=1");
  auto s = spec();
  s.request_id = "client-id";
  s.traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-a0a1a2a3a4a5a6a7-01";
  std::string h = head(s, client);
  EXPECT_NE(h.find("Accept-Encoding: identity\r\nx-request-id: client-id\r\n"
                   "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-a0a1a2a3a4a5a6a7-01\r\n"),
            std::string::npos)
      << h;
  EXPECT_EQ(h.find("X-Request-ID"), std::string::npos) << h;
  EXPECT_EQ(h.find("00f067aa0ba902b7"), std::string::npos) << h;
  EXPECT_NE(h.find("tracestate: v=1\r\n"), std::string::npos) << h;
  // A tracestate whose traceparent was invalid belongs to no trace the upstream will see.
  s.keep_tracestate = false;
  h = head(s, client);
  EXPECT_EQ(h.find("tracestate"), std::string::npos) << h;
  // Without the gateway's values, the client's pass as they are.
  h = head(spec(), client);
  EXPECT_NE(h.find("X-Request-ID: client-id\r\n"), std::string::npos) << h;
  EXPECT_NE(h.find("00f067aa0ba902b7"), std::string::npos) << h;
}

TEST(UpstreamHead, TheRequestLineJoinsTheBasePathByItsRule) {
  HttpFields client;
  auto s = spec();
  s.base_path = "/v1";
  s.target = "/v1/chat/completions";
  EXPECT_EQ(head(s, client).rfind("POST /v1/chat/completions HTTP/1.1\r\n", 0), 0u);
  s.base_path = "";
  EXPECT_EQ(head(s, client).rfind("POST /v1/chat/completions HTTP/1.1\r\n", 0), 0u);
}

TEST(UpstreamHead, HopByHopFieldsStayBehind) {
  HttpFields client;
  client.insert("Connection", "keep-alive, X-Custom-Hop");
  client.insert("X-Custom-Hop", "1");
  client.insert("Keep-Alive", "timeout=5");
  client.insert("TE", "trailers");
  client.insert("Upgrade", "h2c");
  client.insert("Proxy-Authorization", "Basic abc");
  client.insert("Proxy-Connection", "keep-alive");
  client.insert("HTTP2-Settings", "AAMAAABkAAQAAP__");
  client.insert("Transfer-Encoding", "chunked");
  client.insert("Trailer", "X-T");
  client.insert("Expect", "100-continue");
  client.insert("X-Keep-Me", "yes");
  const std::string h = head(spec(), client);
  for (const char* gone : {"Connection", "X-Custom-Hop", "Keep-Alive", "TE:", "Upgrade", "Proxy-",
                           "HTTP2-Settings", "Transfer-Encoding", "Trailer", "Expect"}) {
    EXPECT_EQ(h.find(gone), std::string::npos) << gone << "\n" << h;
  }
  EXPECT_NE(h.find("X-Keep-Me: yes\r\n"), std::string::npos);
}

struct ForwardCase {
  const char* name;
  bool forwarded;
  bool trusted;
  const char* xff;
  const char* proto;
  const char* via;
};

TEST(UpstreamHead, HopRecord) {
  const ForwardCase cases[] = {
      {"untrusted peer: replaced", true, false, "X-Forwarded-For: 192.0.2.7\r\n",
       "X-Forwarded-Proto: http\r\n", "Via: 1.0 lb, 1.1 rolter\r\n"},
      {"trusted peer: extended", true, true,
       "X-Forwarded-For: 203.0.113.9, 10.0.0.1, 192.0.2.7\r\n", "X-Forwarded-Proto: https\r\n",
       "Via: 1.0 lb, 1.1 rolter\r\n"},
      {"off: passed through", false, false, "X-Forwarded-For: 203.0.113.9\r\n",
       "X-Forwarded-Proto: https\r\n", "Via: 1.0 lb\r\n"},
  };
  HttpFields client;
  client.insert("X-Forwarded-For", "203.0.113.9");
  client.insert("X-Forwarded-For", "10.0.0.1");
  client.insert("X-Forwarded-Proto", "https");
  client.insert("Via", "1.0 lb");
  for (const auto& c : cases) {
    auto s = spec();
    s.forwarded = c.forwarded;
    s.trusted_peer = c.trusted;
    const std::string h = head(s, client);
    EXPECT_NE(h.find(c.xff), std::string::npos) << c.name << "\n" << h;
    EXPECT_NE(h.find(c.proto), std::string::npos) << c.name << "\n" << h;
    EXPECT_NE(h.find(c.via), std::string::npos) << c.name << "\n" << h;
    // One record each: the client's copies are replaced, not repeated.
    if (c.forwarded) {
      EXPECT_EQ(h.find("X-Forwarded-For", h.find("X-Forwarded-For") + 1), std::string::npos);
    }
  }
}

TEST(UpstreamHead, NoLengthForABodilessGet) {
  auto s = spec();
  s.method = "GET";
  s.content_length.reset();
  EXPECT_EQ(head(s, {}).find("Content-Length"), std::string::npos);
}

}  // namespace
}  // namespace rolter
