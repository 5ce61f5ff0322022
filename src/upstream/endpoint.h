// Endpoint: one upstream instance's address (a replica's base_url), parsed once into what dialling
// it needs: host and port, TLS, the Host header and the base path.
//
// Providers' instances (snapshot/) and every background client (LMCache poller, telemetry sender,
// control-plane client) parse their URLs here, so all of them dial what `rolter check` accepted.
//
// Usage:
//   auto endpoint = parse_endpoint("http://10.0.0.5:8001/v1");
//   // endpoint->host == "10.0.0.5", endpoint->port == "8001", endpoint->base_path == "/v1"
//
// Thread-safety: a pure function and a plain value; call from any thread.
#pragma once

#include <tl/expected.hpp>

#include <string>
#include <string_view>

namespace rolter {

struct Endpoint {
  std::string base_url;
  bool tls = false;
  std::string host;         // for DNS, SNI and certificate verification
  std::string port;         // numeric service string
  std::string host_header;  // "host" or "host:port" when the port is not the default
  std::string base_path;    // prefix for request paths, without a trailing '/'
};

// The Endpoint to dial for a URL such as "http://10.0.0.5:8001/v1"; the error says why it does not
// parse (config/url.h).
tl::expected<Endpoint, std::string> parse_endpoint(std::string_view url);

}  // namespace rolter
