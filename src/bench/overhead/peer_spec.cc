#include "bench/overhead/peer_spec.h"

#include <algorithm>
#include <cctype>

#include "config/url.h"

namespace rolter::bench::overhead {
namespace {

constexpr std::string_view kPlaceholder = "{upstream}";

bool is_token_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_token_char);
}

}  // namespace

tl::expected<std::vector<PeerSpec>, std::string> parse_peers(
    const std::vector<std::string>& peers, const std::vector<std::string>& peer_headers) {
  std::vector<PeerSpec> out;
  for (const std::string& p : peers) {
    const auto eq = p.find('=');
    if (eq == std::string::npos) return tl::unexpected("--peer " + p + ": expected NAME=URL");
    PeerSpec spec{p.substr(0, eq), p.substr(eq + 1), {}};
    if (!is_token(spec.name)) {
      return tl::unexpected("--peer " + p + ": the name must be letters, digits, '-', '_' or '.'");
    }
    for (const char* reserved : kReservedPathNames) {
      if (spec.name == reserved) {
        return tl::unexpected("--peer " + p + ": \"" + spec.name + "\" names a built-in path");
      }
    }
    if (std::any_of(out.begin(), out.end(), [&](const PeerSpec& s) { return s.name == spec.name; }))
      return tl::unexpected("--peer " + p + ": peer \"" + spec.name + "\" given twice");
    auto url = parse_url(spec.url);
    if (!url) return tl::unexpected("--peer " + p + ": " + url.error());
    if (url->tls()) return tl::unexpected("--peer " + p + ": only http:// peers are supported");
    spec.url = url->to_string();
    out.push_back(std::move(spec));
  }
  for (const std::string& h : peer_headers) {
    const auto colon = h.find(':');
    const auto eq = h.find('=', colon == std::string::npos ? 0 : colon);
    if (colon == std::string::npos || eq == std::string::npos) {
      return tl::unexpected("--peer-header " + h + ": expected NAME:HEADER=VALUE");
    }
    const std::string name = h.substr(0, colon);
    const std::string header = h.substr(colon + 1, eq - colon - 1);
    if (!is_token(header)) {
      return tl::unexpected("--peer-header " + h + ": \"" + header + "\" is not a header name");
    }
    auto peer =
        std::find_if(out.begin(), out.end(), [&](const PeerSpec& s) { return s.name == name; });
    if (peer == out.end()) {
      return tl::unexpected("--peer-header " + h + ": no --peer named \"" + name + "\"");
    }
    peer->headers.emplace_back(header, h.substr(eq + 1));
  }
  return out;
}

std::string substitute_upstream(std::string value, const std::string& upstream_url) {
  for (size_t at = value.find(kPlaceholder); at != std::string::npos;
       at = value.find(kPlaceholder, at + upstream_url.size())) {
    value.replace(at, kPlaceholder.size(), upstream_url);
  }
  return value;
}

void substitute_upstream(std::vector<PeerSpec>& peers, const std::string& upstream_url) {
  for (PeerSpec& p : peers) {
    for (auto& [name, value] : p.headers)
      value = substitute_upstream(std::move(value), upstream_url);
  }
}

}  // namespace rolter::bench::overhead
