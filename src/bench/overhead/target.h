// One path under test as the load generators see it: where to connect, which request to send.
//
// Thread-safety: a plain value; build it once, then share it read-only.
#pragma once

#include <cstdint>
#include <string>
#include <tl/expected.hpp>
#include <utility>
#include <vector>

namespace rolter::bench::overhead {

struct Target {
  std::string name;  // "direct", "rolter", "nginx", "haproxy" or a peer's name
  std::string host;
  uint16_t port = 0;
  std::string path;  // the base URL's path + /v1/chat/completions
  std::vector<std::pair<std::string, std::string>> headers;  // extra, e.g. a peer's

  // http://host:port + path, for wrk.
  std::string url() const;
  // The whole HTTP/1.1 request (keep-alive), built once and written as is for every request.
  std::string raw_request(bool stream) const;
  // The headers of raw_request() besides Host and Content-Length, for wrk's script.
  std::vector<std::pair<std::string, std::string>> request_headers(bool stream) const;
};

// A target from a base URL such as http://127.0.0.1:8080 (a path, if any, is kept as a prefix).
tl::expected<Target, std::string> make_target(
    std::string name, const std::string& base_url,
    std::vector<std::pair<std::string, std::string>> headers = {});

}  // namespace rolter::bench::overhead
