#include "config/url.h"

#include <optional>

#include <cctype>

namespace rolter {
namespace {

bool is_reg_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
}

bool is_ipv6_char(char c) {
  // Hex digits and colons, dots for an embedded IPv4 tail.
  return std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.';
}

// Parses a decimal port of at most five digits.
tl::expected<uint32_t, std::string> parse_port(std::string_view digits) {
  if (digits.empty()) return tl::unexpected(std::string("empty port"));
  if (digits.size() > 5) return tl::unexpected("port out of range: " + std::string(digits));
  uint32_t port = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return tl::unexpected("port is not a number: " + std::string(digits));
    port = port * 10 + static_cast<uint32_t>(c - '0');
  }
  if (port > 65535) return tl::unexpected("port out of range: " + std::string(digits));
  return port;
}

// Splits an authority ("host", "host:port", "[v6]", "[v6]:port") into host and port text.
tl::expected<std::pair<std::string, std::string_view>, std::string> split_authority(
    std::string_view authority, bool* has_port) {
  *has_port = false;
  std::string_view host;
  std::string_view rest;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return tl::unexpected(std::string("unterminated '[' in IPv6 address"));
    }
    host = authority.substr(1, close - 1);
    if (host.empty()) return tl::unexpected(std::string("empty IPv6 address"));
    for (char c : host) {
      if (!is_ipv6_char(c)) return tl::unexpected("bad IPv6 address: " + std::string(host));
    }
    if (host.find(':') == std::string_view::npos) {
      return tl::unexpected("bad IPv6 address: " + std::string(host));
    }
    rest = authority.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') {
      return tl::unexpected(std::string("unexpected text after ']'"));
    }
  } else {
    size_t colon = authority.find(':');
    host = authority.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view() : authority.substr(colon);
    if (host.empty()) return tl::unexpected(std::string("missing host"));
    for (char c : host) {
      if (!is_reg_name_char(c)) {
        return tl::unexpected("bad character '" + std::string(1, c) + "' in host");
      }
    }
  }
  std::string_view port_text;
  if (!rest.empty()) {
    *has_port = true;
    port_text = rest.substr(1);  // after ':'
  }
  return std::pair<std::string, std::string_view>(std::string(host), port_text);
}

}  // namespace

std::string Url::authority() const {
  std::string out = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  uint16_t default_port = tls() ? 443 : 80;
  if (port != default_port) out += ":" + std::to_string(port);
  return out;
}

std::string Url::to_string() const { return scheme + "://" + authority() + path; }

tl::expected<Url, std::string> parse_url(std::string_view text) {
  Url url;
  size_t sep = text.find("://");
  if (sep == std::string_view::npos) {
    return tl::unexpected(std::string("expected http:// or https://"));
  }
  std::string scheme(text.substr(0, sep));
  for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme != "http" && scheme != "https") {
    return tl::unexpected("unsupported scheme \"" + scheme + "\" (expected http or https)");
  }
  url.scheme = scheme;
  std::string_view rest = text.substr(sep + 3);
  for (char c : rest) {
    if (c == '?' || c == '#') {
      return tl::unexpected(std::string("query and fragment are not allowed in a base URL"));
    }
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) {
      return tl::unexpected(std::string("URL contains whitespace or a control character"));
    }
  }
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  if (authority.find('@') != std::string_view::npos) {
    return tl::unexpected(std::string("credentials in URLs are not supported; use api_key_env"));
  }
  bool has_port = false;
  auto parts = split_authority(authority, &has_port);
  if (!parts) return tl::unexpected(parts.error());
  url.host = std::move(parts->first);
  if (has_port) {
    auto port = parse_port(parts->second);
    if (!port) return tl::unexpected(port.error());
    if (*port == 0) return tl::unexpected(std::string("port 0 is not a valid upstream port"));
    url.port = static_cast<uint16_t>(*port);
  } else {
    url.port = url.tls() ? 443 : 80;
  }
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  url.path = std::string(path);
  return url;
}

tl::expected<HostPort, std::string> parse_host_port(std::string_view text, bool allow_port_zero) {
  bool has_port = false;
  auto parts = split_authority(text, &has_port);
  if (!parts) return tl::unexpected(parts.error());
  if (!has_port) return tl::unexpected(std::string("expected host:port"));
  auto port = parse_port(parts->second);
  if (!port) return tl::unexpected(port.error());
  if (*port == 0 && !allow_port_zero) return tl::unexpected(std::string("port 0 is not allowed"));
  return HostPort{std::move(parts->first), static_cast<uint16_t>(*port)};
}

tl::expected<RedisAddress, std::string> parse_redis_url(std::string_view text) {
  auto number = [](std::string_view digits, uint64_t max) -> std::optional<uint64_t> {
    if (digits.empty() || digits.size() > 10) return std::nullopt;
    uint64_t value = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return std::nullopt;
      value = value * 10 + static_cast<uint64_t>(c - '0');
    }
    if (value > max) return std::nullopt;
    return value;
  };
  RedisAddress address;
  constexpr std::string_view kUnix = "unix://";
  constexpr std::string_view kRedis = "redis://";
  if (text.substr(0, kUnix.size()) == kUnix) {
    std::string_view rest = text.substr(kUnix.size());
    if (const size_t q = rest.find('?'); q != std::string_view::npos) {
      const std::string_view query = rest.substr(q + 1);
      rest = rest.substr(0, q);
      const auto db = query.substr(0, 3) == "db=" ? number(query.substr(3), 1u << 20)
                                                  : std::optional<uint64_t>{};
      if (!db)
        return tl::unexpected(std::string("the only query a unix:// URL takes is ?db=<number>"));
      address.db = static_cast<uint32_t>(*db);
    }
    if (rest.empty() || rest.front() != '/') {
      return tl::unexpected(
          std::string("a unix:// URL names an absolute socket path (unix:///run/redis.sock)"));
    }
    address.socket_path = std::string(rest);
    return address;
  }
  constexpr std::string_view kRediss = "rediss://";
  address.tls = text.substr(0, kRediss.size()) == kRediss;
  if (!address.tls && text.substr(0, kRedis.size()) != kRedis) {
    return tl::unexpected(std::string(
        "expected redis://host[:port][/db], rediss://host[:port][/db] or unix:///path/to/socket"));
  }
  std::string_view rest = text.substr(address.tls ? kRediss.size() : kRedis.size());
  if (rest.find('@') != std::string_view::npos) {
    return tl::unexpected(
        std::string("credentials do not belong in the URL: use redis_password_env"));
  }
  if (const size_t slash = rest.find('/'); slash != std::string_view::npos) {
    const auto db = number(rest.substr(slash + 1), 1u << 20);
    if (!db) return tl::unexpected(std::string("the path of a redis:// URL is a database number"));
    address.db = static_cast<uint32_t>(*db);
    rest = rest.substr(0, slash);
  }
  const size_t bracket = rest.find(']');
  const size_t colon = rest.rfind(':');
  const bool has_port = colon != std::string_view::npos &&
                        (bracket == std::string_view::npos ? rest.front() != '[' : colon > bracket);
  auto host_port = parse_host_port(has_port ? rest : std::string(rest) + ":6379", false);
  if (!host_port) return tl::unexpected(host_port.error());
  address.host = std::move(host_port->host);
  address.port = host_port->port;
  return address;
}

}  // namespace rolter
