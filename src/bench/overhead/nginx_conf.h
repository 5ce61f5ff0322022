// The reverse proxies' configurations for the bench. nginx: the canned upstream (`return 200`
// with a fixed chat.completion, or an SSE stream when the request carries `x-bench-stream`) and
// the `proxy_pass` reverse proxy measured as the no-logic floor. Every path nginx writes (pid,
// error log, temporary files) is inside `dir`, so it runs without root and never touches /var.
// HAProxy: the second no-logic floor, a plain HTTP proxy that writes no files at all.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

namespace rolter::bench::overhead {

struct NginxCommon {
  std::string dir;     // private directory: pid, logs and temp paths go here
  uint16_t port = 0;   // listens on 127.0.0.1:port
  int workers = 1;     // worker_processes; 1 = a single process (master_process off)
  std::string run_as;  // `user` directive, only when started as root ("" = none)
};

std::string upstream_nginx_conf(const NginxCommon& c, int stream_chunks);

// Forwards every request to 127.0.0.1:`upstream_port` over kept-alive HTTP/1.1 connections,
// unbuffered so SSE events pass as they come.
std::string proxy_nginx_conf(const NginxCommon& c, uint16_t upstream_port);

// HAProxy in one foreground process (started with -db) of `threads` threads, no logging,
// listening on 127.0.0.1:`port` and forwarding every request to 127.0.0.1:`upstream_port`, its
// idle server connections shared by all clients (`http-reuse always`).
std::string haproxy_conf(uint16_t port, int threads, uint16_t upstream_port);

// Escapes `s` for a single-quoted nginx string; newlines become \n.
std::string nginx_quote(const std::string& s);

}  // namespace rolter::bench::overhead
