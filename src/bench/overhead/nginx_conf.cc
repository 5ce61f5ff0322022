#include "bench/overhead/nginx_conf.h"

#include "bench/overhead/workload.h"

namespace rolter::bench::overhead {
namespace {

// Shared by both roles: process model, files in `dir`, no access log, long keep-alive so the
// load generators' connections are never recycled mid-run.
std::string preamble(const NginxCommon& c) {
  const std::string d = c.dir;
  std::string s;
  if (!c.run_as.empty()) s += "user " + c.run_as + ";\n";
  s += "daemon off;\n";
  s += c.workers <= 1 ? "master_process off;\nworker_processes 1;\n"
                      : "master_process on;\nworker_processes " + std::to_string(c.workers) + ";\n";
  s += "pid " + d + "/nginx.pid;\nerror_log " + d + "/error.log warn;\n";
  s += "worker_rlimit_nofile 16384;\n";
  s += "events { worker_connections 8192; }\n";
  s += "http {\n  access_log off;\n";
  for (const char* t : {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"}) {
    s += "  " + std::string(t) + "_temp_path " + d + "/" + t + "_temp;\n";
  }
  s += "  keepalive_requests 100000000;\n  keepalive_timeout 300s;\n";
  return s;
}

}  // namespace

std::string nginx_quote(const std::string& s) {
  std::string out = "'";
  for (char ch : s) {
    if (ch == '\'' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (ch == '\n') {
      out += "\\n";
    } else {
      out += ch;
    }
  }
  return out + "'";
}

std::string upstream_nginx_conf(const NginxCommon& c, int stream_chunks) {
  std::string s = preamble(c);
  s += "  server {\n    listen 127.0.0.1:" + std::to_string(c.port) + ";\n";
  // `return` answers without reading further; the header picks the SSE variant.
  s += "    location = " + std::string(kChatPath) + " {\n";
  s += "      if ($http_x_bench_stream) { rewrite ^ /bench-sse last; }\n";
  s += "      default_type application/json;\n";
  s += "      return 200 " + nginx_quote(completion_body()) + ";\n    }\n";
  s += "    location = /bench-sse {\n      internal;\n      default_type text/event-stream;\n";
  s += "      add_header Cache-Control no-cache;\n";
  s += "      return 200 " + nginx_quote(sse_body(stream_chunks)) + ";\n    }\n";
  // A collector that takes every OTLP batch (--tracing-live-collector); nginx does not read it.
  s += "    location = /v1/traces {\n      return 200;\n    }\n";
  s += "  }\n}\n";
  return s;
}

std::string proxy_nginx_conf(const NginxCommon& c, uint16_t upstream_port) {
  std::string s = preamble(c);
  s += "  upstream bench_upstream {\n    server 127.0.0.1:" + std::to_string(upstream_port) +
       ";\n    keepalive 64;\n  }\n";
  s += "  server {\n    listen 127.0.0.1:" + std::to_string(c.port) + ";\n";
  s += "    location / {\n      proxy_pass http://bench_upstream;\n";
  s += "      proxy_http_version 1.1;\n      proxy_set_header Connection \"\";\n";
  // Unbuffered for SSE; a one-packet JSON answer passes the same way either way.
  s += "      proxy_buffering off;\n    }\n  }\n}\n";
  return s;
}

}  // namespace rolter::bench::overhead
