// The `--peer NAME=URL` and `--peer-header NAME:HEADER=VALUE` arguments of `rolter-bench
// overhead`: other gateways, already running, measured in the same run as rolter.
//
// Usage:
//   auto peers = parse_peers({"portkey=http://127.0.0.1:8787"},
//                            {"portkey:x-portkey-custom-host={upstream}/v1"});
//   substitute_upstream(*peers, "http://127.0.0.1:9001");
//   // (*peers)[0].headers[0] == {"x-portkey-custom-host", "http://127.0.0.1:9001/v1"}
//
// Thread-safety: pure functions and plain values.
#pragma once

#include <string>
#include <tl/expected.hpp>
#include <utility>
#include <vector>

namespace rolter::bench::overhead {

struct PeerSpec {
  std::string name;  // as given; also the path's name in the report
  std::string url;   // base URL; requests go to url + "/v1/chat/completions"
  std::vector<std::pair<std::string, std::string>> headers;  // sent to this peer only
};

// Names the built-in paths take; a peer may not reuse them.
inline constexpr const char* kReservedPathNames[] = {"direct", "rolter", "nginx"};

// Parses every --peer and --peer-header. Errors: a missing '=' or ':', an empty name or header,
// a URL that is not http://host:port[/path], a duplicate or reserved name, a header for a peer
// that was not declared.
tl::expected<std::vector<PeerSpec>, std::string> parse_peers(
    const std::vector<std::string>& peers, const std::vector<std::string>& peer_headers);

// Replaces every "{upstream}" in `value` by `upstream_url`.
std::string substitute_upstream(std::string value, const std::string& upstream_url);

// substitute_upstream() on every header value of every peer.
void substitute_upstream(std::vector<PeerSpec>& peers, const std::string& upstream_url);

}  // namespace rolter::bench::overhead
