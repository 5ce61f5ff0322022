// Discovery of a provider's instances by DNS (SPEC §17): what a `discover` URL asks for, and the
// instance an address found there becomes.
//
//   discover = "dns://vllm-headless.ns.svc.cluster.local:8000"   every A/AAAA address, port 8000
//   discover = "dns+srv://_http._tcp.vllm.ns.svc.cluster.local"  every SRV record's target and port
//
// An optional path after the name (dns://name:8000/v1) is the instances' base path. Instances are
// plain http://ADDRESS:PORT[/path]. The provider's kv_events and lmcache tables are templates:
// "{host}" in their endpoints becomes each instance's address.
//
// Thread-safety: pure functions and plain values.
#pragma once

#include <tl/expected.hpp>

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "config/config.h"

namespace rolter {

struct DiscoverSpec {
  enum class Kind { kAddress, kSrv };
  Kind kind = Kind::kAddress;
  std::string name;   // the DNS name looked up, without a trailing dot
  uint16_t port = 0;  // kAddress only: every address's port
  std::string path;   // "" or the instances' base path, starting with '/'
};

// Parses a provider's `discover` value, or says what is wrong with it.
tl::expected<DiscoverSpec, std::string> parse_discover(std::string_view url);

// Parses `discover_resolver`: "IP" or "IP:PORT" ("[v6]:PORT"); port 53 when absent. Returns the
// server in the "IP:PORT" / "[v6]:PORT" form; a host name is refused (a resolver is an address).
tl::expected<std::string, std::string> parse_discover_resolver(std::string_view text);

// One address found by a lookup.
struct DiscoveredAddress {
  std::string host;  // an IPv4 or IPv6 address, without brackets
  uint16_t port = 0;

  auto operator<=>(const DiscoveredAddress&) const = default;
};

// The instance `address` becomes for a provider discovered by `discover`: its base URL and its
// kv_events / lmcache tables with "{host}" replaced.
InstanceConfig discovered_instance(const DiscoverConfig& discover,
                                   const DiscoveredAddress& address);

// "{host}" is what a template endpoint names the instance's address by.
inline constexpr std::string_view kHostPlaceholder = "{host}";

}  // namespace rolter
