#include "trace/request_id.h"

#include <cstring>

namespace rolter {

bool is_valid_request_id(std::string_view id) {
  if (id.empty() || id.size() > kMaxRequestIdLength) return false;
  for (char c : id) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

void write_uuid_v7(uint64_t unix_ms, Random& random, char* out) {
  std::array<uint8_t, 16> b{};
  for (int i = 0; i < 6; ++i) b[i] = static_cast<uint8_t>(unix_ms >> (40 - 8 * i));
  uint64_t bits = random.next_u64();
  const uint64_t more = random.next_u64();
  for (int i = 6; i < 14; ++i) {
    b[i] = static_cast<uint8_t>(bits);
    bits >>= 8;
  }
  b[14] = static_cast<uint8_t>(more);
  b[15] = static_cast<uint8_t>(more >> 8);
  b[6] = static_cast<uint8_t>(0x70 | (b[6] & 0x0f));  // version 7
  b[8] = static_cast<uint8_t>(0x80 | (b[8] & 0x3f));  // variant 0b10
  static constexpr char kHex[] = "0123456789abcdef";
  size_t at = 0;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out[at++] = '-';
    out[at++] = kHex[b[i] >> 4];
    out[at++] = kHex[b[i] & 0xf];
  }
}

bool RequestId::assign(std::string_view client_id, uint64_t unix_ms, Random& random) {
  if (is_valid_request_id(client_id)) {
    std::memcpy(chars_.data(), client_id.data(), client_id.size());
    size_ = client_id.size();
    return true;
  }
  write_uuid_v7(unix_ms, random, chars_.data());
  size_ = kUuidLength;
  return false;
}

}  // namespace rolter
