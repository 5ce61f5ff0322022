// Cidr: an IPv4 or IPv6 network ("10.0.0.0/8", "::1/128", or a bare address), and matching an
// address against it. IPv4 addresses are held as IPv4-mapped IPv6, so "127.0.0.1/32" matches the
// peer "::ffff:127.0.0.1" of a dual-stack socket too.
//
// Thread-safety: a value type.
#pragma once

#include <tl/expected.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace rolter {

class Cidr {
 public:
  // Parses "address[/prefix]"; a bare address is a /32 or /128.
  static tl::expected<Cidr, std::string> parse(std::string_view text);

  // Whether `address` (textual IPv4 or IPv6) lies in this network; false for unparsable text.
  bool contains(std::string_view address) const;

 private:
  std::array<uint8_t, 16> network_{};
  unsigned prefix_ = 128;  // in the IPv6 (mapped) space
};

}  // namespace rolter
