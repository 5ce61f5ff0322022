#include "http/hop_by_hop.h"

#include <array>

#include "http/tokens.h"

namespace rolter {

bool is_fixed_hop_by_hop(std::string_view name) {
  // RFC 9110 §7.6.1 and the fields that historically meant the same (Proxy-Connection), plus the
  // proxy's own credentials (Proxy-Authorization / -Authenticate are for this hop only) and
  // HTTP2-Settings, which only means something together with an Upgrade.
  static constexpr std::array<std::string_view, 10> kFixed = {"connection",
                                                              "keep-alive",
                                                              "proxy-connection",
                                                              "te",
                                                              "trailer",
                                                              "transfer-encoding",
                                                              "upgrade",
                                                              "proxy-authorization",
                                                              "proxy-authenticate",
                                                              "http2-settings"};
  for (auto fixed : kFixed) {
    if (iequals_ascii(name, fixed)) return true;
  }
  return false;
}

bool ConnectionOptions::is_connection(std::string_view name) {
  return iequals_ascii(name, "connection");
}

void ConnectionOptions::add(std::string_view value) {
  for_each_token(value, [&](std::string_view token) { tokens_.push_back(token); });
}

bool ConnectionOptions::is_hop_by_hop(std::string_view name) const {
  if (is_fixed_hop_by_hop(name)) return true;
  for (auto token : tokens_) {
    if (iequals_ascii(name, token)) return true;
  }
  return false;
}

}  // namespace rolter
