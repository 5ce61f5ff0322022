#include "sim/float_base64.h"

#include <bit>
#include <cstdint>
#include <string_view>
#include <vector>

namespace rolter::sim {
namespace {

// Hand-written: a dozen lines, where the libraries at hand only offer base64 in internal
// namespaces (Beast's detail::base64) or behind a dependency the simulator core does not need.
constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64(const std::vector<uint8_t>& bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t left = bytes.size() - i;
    const uint32_t group = (uint32_t{bytes[i]} << 16) |
                           (left > 1 ? uint32_t{bytes[i + 1]} << 8 : 0) |
                           (left > 2 ? uint32_t{bytes[i + 2]} : 0);
    out += kAlphabet[(group >> 18) & 63];
    out += kAlphabet[(group >> 12) & 63];
    out += left > 1 ? kAlphabet[(group >> 6) & 63] : '=';
    out += left > 2 ? kAlphabet[group & 63] : '=';
  }
  return out;
}

}  // namespace

std::string float32_base64(std::span<const float> values) {
  std::vector<uint8_t> bytes;
  bytes.reserve(values.size() * 4);
  for (float v : values) {
    const auto bits = std::bit_cast<uint32_t>(v);
    for (int shift = 0; shift < 32; shift += 8)
      bytes.push_back(static_cast<uint8_t>(bits >> shift));
  }
  return base64(bytes);
}

}  // namespace rolter::sim
