#include "bench/overhead/nginx_conf.h"

#include <gtest/gtest.h>

#include "bench/overhead/workload.h"

namespace rolter::bench::overhead {
namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(NginxConfTest, UpstreamStaysInItsDirectoryAndAnswersBothWays) {
  const std::string c = upstream_nginx_conf({"/tmp/d", 9001, 1, ""}, 4);
  EXPECT_TRUE(has(c, "master_process off;"));
  EXPECT_TRUE(has(c, "pid /tmp/d/nginx.pid;"));
  EXPECT_TRUE(has(c, "error_log /tmp/d/error.log"));
  EXPECT_TRUE(has(c, "proxy_temp_path /tmp/d/proxy_temp;"));
  EXPECT_TRUE(has(c, "client_body_temp_path /tmp/d/client_body_temp;"));
  EXPECT_TRUE(has(c, "access_log off;"));
  EXPECT_TRUE(has(c, "listen 127.0.0.1:9001;"));
  EXPECT_TRUE(has(c, "$http_x_bench_stream"));
  EXPECT_TRUE(has(c, "default_type text/event-stream;"));
  EXPECT_TRUE(has(c, "data: [DONE]\\n\\n'"));
  EXPECT_TRUE(has(c, "location = /v1/traces {\n      return 200;"));  // the live collector
  EXPECT_FALSE(has(c, "/var/"));
  EXPECT_FALSE(has(c, "user "));
}

TEST(NginxConfTest, ProxyKeepsUpstreamConnectionsAlive) {
  const std::string c = proxy_nginx_conf({"/tmp/p", 9002, 4, "root"}, 9001);
  EXPECT_TRUE(has(c, "user root;"));
  EXPECT_TRUE(has(c, "master_process on;"));
  EXPECT_TRUE(has(c, "worker_processes 4;"));
  EXPECT_TRUE(has(c, "server 127.0.0.1:9001;"));
  EXPECT_TRUE(has(c, "keepalive 64;"));
  EXPECT_TRUE(has(c, "proxy_http_version 1.1;"));
  EXPECT_TRUE(has(c, "proxy_set_header Connection \"\";"));
  EXPECT_TRUE(has(c, "proxy_buffering off;"));
}

TEST(HaproxyConfTest, ForegroundThreadsSilentAndReusingUpstreamConnections) {
  const std::string c = haproxy_conf(9003, 4, 9001);
  EXPECT_TRUE(has(c, "global\n  nbthread 4\n"));
  EXPECT_TRUE(has(c, "defaults\n  mode http\n"));
  EXPECT_TRUE(has(c, "  no log\n"));
  EXPECT_TRUE(has(c, "  http-reuse always\n"));
  EXPECT_TRUE(has(c, "  option http-keep-alive\n"));
  EXPECT_TRUE(has(c, "  timeout connect 5s\n"));
  EXPECT_TRUE(has(c, "  timeout client 60s\n"));
  EXPECT_TRUE(has(c, "  timeout server 60s\n"));
  EXPECT_TRUE(has(c, "  bind 127.0.0.1:9003\n"));
  EXPECT_TRUE(has(c, "  default_backend bench_upstream\n"));
  EXPECT_TRUE(has(c, "backend bench_upstream\n  server upstream 127.0.0.1:9001\n"));
  // Run by the bench as its child: no daemon, no master process, no log target, no files.
  for (const char* absent : {"daemon", "master-worker", "\n  log ", "pidfile", "/var/", "chroot"}) {
    EXPECT_FALSE(has(c, absent)) << absent;
  }
  EXPECT_TRUE(has(haproxy_conf(9003, 0, 9001), "nbthread 1\n"));
}

TEST(NginxConfTest, QuotesForNginx) { EXPECT_EQ(nginx_quote("it's\na\\b"), "'it\\'s\\na\\\\b'"); }

TEST(WorkloadTest, SseBodyHasTheChunksThenDone) {
  const std::string s = sse_body(3);
  size_t events = 0;
  for (size_t at = s.find("data: "); at != std::string::npos; at = s.find("data: ", at + 1)) {
    ++events;
  }
  EXPECT_EQ(events, 4u);
  EXPECT_TRUE(has(s, "\"finish_reason\":\"stop\""));
  EXPECT_EQ(s.substr(s.size() - 14), "data: [DONE]\n\n");
  EXPECT_TRUE(has(request_body(true), "\"stream\":true"));
  EXPECT_FALSE(has(request_body(false), "stream"));
}

}  // namespace
}  // namespace rolter::bench::overhead
