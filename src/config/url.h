// A small parser for the URLs and listen addresses that appear in rolter.toml.
//
// Only what a gateway needs to reach an upstream: `http://` or `https://`, a host (a name, an IPv4
// address, or an IPv6 address in brackets), an optional port (default 80 / 443) and an optional
// base path. Userinfo, query and fragment are rejected: credentials belong in `api_key_env`, and a
// query string on a base URL would be silently dropped when request paths are appended to it.
// The upstream client reuses parse_url() so that what `rolter check` accepts is what it dials.
//
// Usage:
//   auto url = parse_url("http://[::1]:8001/v1");
//   // url->host == "::1", url->port == 8001, url->path == "/v1", url->authority() == "[::1]:8001"
//
// Thread-safety: pure functions and plain values; call from any thread.
#pragma once

#include <tl/expected.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace rolter {

struct Url {
  std::string scheme;  // "http" or "https", lower case
  std::string host;    // without the brackets of an IPv6 literal
  uint16_t port = 0;   // the explicit port, or 80 / 443 by scheme
  std::string path;    // "" or starting with '/', trailing '/' removed: path + "/v1/..." is safe

  bool tls() const { return scheme == "https"; }
  // host[:port] as written in a Host header: brackets around IPv6, port omitted when default.
  std::string authority() const;
  // scheme://authority/path, normalised.
  std::string to_string() const;
};

// Returns the parsed URL or a message saying what is wrong with it.
tl::expected<Url, std::string> parse_url(std::string_view text);

struct HostPort {
  std::string host;  // without the brackets of an IPv6 literal; never empty
  uint16_t port = 0;
};

// Where a Redis server listens: `redis://host[:port][/db]` (port 6379, db 0 by default),
// `rediss://host[:port][/db]` (the same over TLS) or `unix:///path/to/redis.sock[?db=N]`.
struct RedisAddress {
  std::string host;  // empty for a Unix socket
  uint16_t port = 6379;
  std::string socket_path;  // set for unix://
  uint32_t db = 0;
  bool tls = false;  // rediss://
};
tl::expected<RedisAddress, std::string> parse_redis_url(std::string_view text);

// Parses "host:port" or "[v6]:port". Port 0 is accepted only when `allow_port_zero` (a listener
// asking the OS for a free port).
tl::expected<HostPort, std::string> parse_host_port(std::string_view text, bool allow_port_zero);

}  // namespace rolter
