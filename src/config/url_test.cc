#include "config/url.h"

#include <gtest/gtest.h>

namespace rolter {
namespace {

TEST(ParseUrl, HostPortAndPath) {
  auto url = parse_url("http://127.0.0.1:8001/v1/");
  ASSERT_TRUE(url) << url.error();
  EXPECT_EQ(url->scheme, "http");
  EXPECT_EQ(url->host, "127.0.0.1");
  EXPECT_EQ(url->port, 8001);
  EXPECT_EQ(url->path, "/v1");
  EXPECT_FALSE(url->tls());
  EXPECT_EQ(url->authority(), "127.0.0.1:8001");
  EXPECT_EQ(url->to_string(), "http://127.0.0.1:8001/v1");
}

TEST(ParseUrl, DefaultPorts) {
  auto http = parse_url("http://example.com");
  ASSERT_TRUE(http);
  EXPECT_EQ(http->port, 80);
  EXPECT_EQ(http->path, "");
  EXPECT_EQ(http->authority(), "example.com");

  auto https = parse_url("HTTPS://api.example.com/");
  ASSERT_TRUE(https);
  EXPECT_EQ(https->scheme, "https");
  EXPECT_EQ(https->port, 443);
  EXPECT_TRUE(https->tls());
  EXPECT_EQ(https->path, "");
  EXPECT_EQ(https->to_string(), "https://api.example.com");
}

TEST(ParseUrl, Ipv6) {
  auto url = parse_url("http://[::1]:9000/occupancy");
  ASSERT_TRUE(url) << url.error();
  EXPECT_EQ(url->host, "::1");
  EXPECT_EQ(url->port, 9000);
  EXPECT_EQ(url->path, "/occupancy");
  EXPECT_EQ(url->authority(), "[::1]:9000");

  auto no_port = parse_url("https://[2001:db8::5]");
  ASSERT_TRUE(no_port);
  EXPECT_EQ(no_port->port, 443);
  EXPECT_EQ(no_port->authority(), "[2001:db8::5]");
}

TEST(ParseUrl, Rejects) {
  for (const char* bad : {
           "",
           "127.0.0.1:8001",
           "ftp://host",
           "http://",
           "http:///path",
           "http://host:",
           "http://host:0",
           "http://host:65536",
           "http://host:80a",
           "http://host:123456",
           "http://user:pw@host",
           "http://host/path?q=1",
           "http://host/#frag",
           "http://ho st",
           "http://[::1",
           "http://[]:80",
           "http://[zz]:80",
           "http://[::1]x",
           "http://host/a b",
       }) {
    EXPECT_FALSE(parse_url(bad)) << bad;
  }
}

TEST(ParseHostPort, Accepts) {
  auto v4 = parse_host_port("0.0.0.0:4000", false);
  ASSERT_TRUE(v4);
  EXPECT_EQ(v4->host, "0.0.0.0");
  EXPECT_EQ(v4->port, 4000);

  auto v6 = parse_host_port("[::]:0", true);
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "::");
  EXPECT_EQ(v6->port, 0);

  auto max = parse_host_port("localhost:65535", false);
  ASSERT_TRUE(max);
  EXPECT_EQ(max->port, 65535);
}

TEST(ParseHostPort, Rejects) {
  EXPECT_FALSE(parse_host_port("localhost", true));
  EXPECT_FALSE(parse_host_port(":4000", true));
  EXPECT_FALSE(parse_host_port("localhost:", true));
  EXPECT_FALSE(parse_host_port("localhost:65536", true));
  EXPECT_FALSE(parse_host_port("localhost:0", false));
  EXPECT_FALSE(parse_host_port("::1:4000", true));  // IPv6 needs brackets
  EXPECT_FALSE(parse_host_port("[::1]4000", true));
}

TEST(ParseRedisUrl, AcceptsTcpAndUnixSockets) {
  auto plain = parse_redis_url("redis://cache.internal");
  ASSERT_TRUE(plain) << plain.error();
  EXPECT_EQ(plain->host, "cache.internal");
  EXPECT_EQ(plain->port, 6379);
  EXPECT_EQ(plain->db, 0u);
  auto full = parse_redis_url("redis://[::1]:7000/3");
  ASSERT_TRUE(full) << full.error();
  EXPECT_EQ(full->host, "::1");
  EXPECT_EQ(full->port, 7000);
  EXPECT_EQ(full->db, 3u);
  auto v6 = parse_redis_url("redis://[::1]");
  ASSERT_TRUE(v6) << v6.error();
  EXPECT_EQ(v6->port, 6379);
  EXPECT_FALSE(plain->tls);
  auto tls = parse_redis_url("rediss://cache.internal/4");
  ASSERT_TRUE(tls) << tls.error();
  EXPECT_TRUE(tls->tls);
  EXPECT_EQ(tls->host, "cache.internal");
  EXPECT_EQ(tls->port, 6379);
  EXPECT_EQ(tls->db, 4u);
  auto tls_port = parse_redis_url("rediss://10.0.0.5:6380");
  ASSERT_TRUE(tls_port) << tls_port.error();
  EXPECT_TRUE(tls_port->tls);
  EXPECT_EQ(tls_port->port, 6380);
  auto unix_socket = parse_redis_url("unix:///run/redis/redis.sock?db=2");
  ASSERT_TRUE(unix_socket) << unix_socket.error();
  EXPECT_EQ(unix_socket->socket_path, "/run/redis/redis.sock");
  EXPECT_TRUE(unix_socket->host.empty());
  EXPECT_EQ(unix_socket->db, 2u);
}

TEST(ParseRedisUrl, RejectsWhatItCannotDial) {
  EXPECT_FALSE(parse_redis_url("http://cache:6379"));
  EXPECT_FALSE(parse_redis_url("redis://user:secret@cache:6379"));  // password_env instead
  EXPECT_FALSE(parse_redis_url("redis://cache:6379/db"));
  EXPECT_FALSE(parse_redis_url("redis://cache:70000"));
  EXPECT_FALSE(parse_redis_url("redis://"));
  EXPECT_FALSE(parse_redis_url("rediss://"));
  EXPECT_FALSE(parse_redis_url("rediss://user:secret@cache:6380"));
  EXPECT_FALSE(parse_redis_url("redisss://cache"));
  EXPECT_FALSE(parse_redis_url("unix://relative.sock"));
  EXPECT_FALSE(parse_redis_url("unix:///run/redis.sock?timeout=1"));
}

}  // namespace
}  // namespace rolter
