#include "config/discover.h"

#include <arpa/inet.h>

#include <charconv>

#include "config/url.h"

namespace rolter {
namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// A DNS name as a lookup takes it: labels of letters, digits, '-' and '_' (SRV's _http._tcp), at
// most 63 characters each and 253 in all.
bool is_dns_name(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  size_t label = 0;
  for (size_t i = 0; i <= name.size(); ++i) {
    if (i == name.size() || name[i] == '.') {
      if (label == 0 || label > 63) return false;
      label = 0;
      continue;
    }
    const char c = name[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_';
    if (!ok) return false;
    ++label;
  }
  return true;
}

bool is_ip(const std::string& host) {
  unsigned char buffer[16];
  return ::inet_pton(AF_INET, host.c_str(), buffer) == 1 ||
         ::inet_pton(AF_INET6, host.c_str(), buffer) == 1;
}

// The host as a URL or a ZeroMQ endpoint writes it: an IPv6 address in brackets.
std::string url_host(const std::string& host) {
  return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

std::string replace_host(std::string text, const std::string& host) {
  for (size_t at = text.find(kHostPlaceholder); at != std::string::npos;
       at = text.find(kHostPlaceholder, at + host.size())) {
    text.replace(at, kHostPlaceholder.size(), host);
  }
  return text;
}

}  // namespace

tl::expected<DiscoverSpec, std::string> parse_discover(std::string_view url) {
  DiscoverSpec spec;
  std::string_view rest;
  if (starts_with(url, "dns+srv://")) {
    spec.kind = DiscoverSpec::Kind::kSrv;
    rest = url.substr(10);
  } else if (starts_with(url, "dns://")) {
    rest = url.substr(6);
  } else {
    return tl::unexpected(std::string("expected dns://NAME:PORT or dns+srv://NAME"));
  }
  if (const size_t slash = rest.find('/'); slash != std::string_view::npos) {
    spec.path = std::string(rest.substr(slash));
    rest = rest.substr(0, slash);
    while (spec.path.size() > 1 && spec.path.back() == '/') spec.path.pop_back();
    if (spec.path == "/") spec.path.clear();
  }
  if (spec.kind == DiscoverSpec::Kind::kAddress) {
    const size_t colon = rest.rfind(':');
    if (colon == std::string_view::npos) {
      return tl::unexpected(std::string("dns:// needs the instances' port: dns://NAME:PORT"));
    }
    const std::string_view port = rest.substr(colon + 1);
    unsigned value = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || end != port.data() + port.size() || value == 0 || value > 65535) {
      return tl::unexpected("bad port '" + std::string(port) + "'");
    }
    spec.port = static_cast<uint16_t>(value);
    rest = rest.substr(0, colon);
  } else if (rest.find(':') != std::string_view::npos) {
    return tl::unexpected(std::string("dns+srv:// takes no port: each SRV record carries its own"));
  }
  if (!rest.empty() && rest.back() == '.') rest.remove_suffix(1);
  if (!is_dns_name(rest)) return tl::unexpected("bad DNS name '" + std::string(rest) + "'");
  spec.name = std::string(rest);
  return spec;
}

tl::expected<std::string, std::string> parse_discover_resolver(std::string_view text) {
  HostPort server{.port = 53};
  const bool bracketed = starts_with(text, "[");
  const bool bare_v6 = !bracketed && text.find(':') != text.rfind(':');
  const bool has_port = bracketed ? text.find("]:") != std::string_view::npos
                                  : !bare_v6 && text.find(':') != std::string_view::npos;
  if (has_port) {
    auto parsed = parse_host_port(text, /*allow_port_zero=*/false);
    if (!parsed) return tl::unexpected(parsed.error());
    server = std::move(*parsed);
  } else if (bracketed && text.size() > 2 && text.back() == ']') {
    server.host = std::string(text.substr(1, text.size() - 2));
  } else {
    server.host = std::string(text);
  }
  if (!is_ip(server.host)) {
    return tl::unexpected("'" + server.host + "' is not an IP address; a resolver is IP[:PORT]");
  }
  return url_host(server.host) + ":" + std::to_string(server.port);
}

InstanceConfig discovered_instance(const DiscoverConfig& discover,
                                   const DiscoveredAddress& address) {
  const std::string host = url_host(address.host);
  InstanceConfig instance;
  auto spec = parse_discover(discover.url);
  instance.base_url =
      "http://" + host + ":" + std::to_string(address.port) + (spec ? spec->path : std::string());
  if (discover.kv_events) {
    instance.kv_events = discover.kv_events;
    instance.kv_events->endpoint = replace_host(instance.kv_events->endpoint, host);
    instance.kv_events->replay_endpoint = replace_host(instance.kv_events->replay_endpoint, host);
  }
  if (discover.lmcache) {
    instance.lmcache = discover.lmcache;
    instance.lmcache->endpoint = replace_host(instance.lmcache->endpoint, host);
  }
  return instance;
}

}  // namespace rolter
