#include "common/cidr.h"

#include <arpa/inet.h>

#include <charconv>
#include <cstring>
#include <optional>

namespace rolter {
namespace {

// The address as 16 bytes (IPv4 mapped into ::ffff:0:0/96) and whether it was IPv4.
std::optional<std::pair<std::array<uint8_t, 16>, bool>> parse_address(std::string_view text) {
  char buffer[64];
  if (text.empty() || text.size() >= sizeof buffer) return std::nullopt;
  std::memcpy(buffer, text.data(), text.size());
  buffer[text.size()] = '\0';
  std::array<uint8_t, 16> bytes{};
  in_addr v4;
  if (::inet_pton(AF_INET, buffer, &v4) == 1) {
    bytes[10] = 0xff;
    bytes[11] = 0xff;
    std::memcpy(bytes.data() + 12, &v4, 4);
    return std::pair{bytes, true};
  }
  if (::inet_pton(AF_INET6, buffer, bytes.data()) == 1) return std::pair{bytes, false};
  return std::nullopt;
}

}  // namespace

tl::expected<Cidr, std::string> Cidr::parse(std::string_view text) {
  const size_t slash = text.find('/');
  auto address = parse_address(text.substr(0, slash));
  if (!address) return tl::unexpected(std::string("not an IPv4 or IPv6 address"));
  const auto [bytes, v4] = *address;
  const unsigned max_prefix = v4 ? 32 : 128;
  unsigned prefix = max_prefix;
  if (slash != std::string_view::npos) {
    const std::string_view digits = text.substr(slash + 1);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), prefix);
    if (ec != std::errc() || end != digits.data() + digits.size() || prefix > max_prefix) {
      return tl::unexpected("prefix length must be 0-" + std::to_string(max_prefix));
    }
  }
  Cidr cidr;
  cidr.prefix_ = v4 ? prefix + 96 : prefix;
  for (unsigned bit = 0; bit < 128; ++bit) {
    if (bit < cidr.prefix_ && (bytes[bit / 8] & (0x80 >> (bit % 8)))) {
      cidr.network_[bit / 8] |= static_cast<uint8_t>(0x80 >> (bit % 8));
    }
  }
  return cidr;
}

bool Cidr::contains(std::string_view text) const {
  auto address = parse_address(text);
  if (!address) return false;
  const auto& bytes = address->first;
  for (unsigned bit = 0; bit < prefix_; ++bit) {
    const uint8_t mask = static_cast<uint8_t>(0x80 >> (bit % 8));
    if ((bytes[bit / 8] & mask) != (network_[bit / 8] & mask)) return false;
  }
  return true;
}

}  // namespace rolter
