#include "control/secrets.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <array>
#include <cstdlib>
#include <vector>

namespace rolter {
namespace {

constexpr char kHex[] = "0123456789abcdef";

std::string to_hex(const unsigned char* data, size_t size) {
  std::string out;
  out.reserve(size * 2);
  for (size_t i = 0; i < size; ++i) {
    out.push_back(kHex[data[i] >> 4]);
    out.push_back(kHex[data[i] & 0xf]);
  }
  return out;
}

int nibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return 0;
}

std::array<unsigned char, SHA256_DIGEST_LENGTH> digest(std::string_view text) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> out{};
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), out.data());
  return out;
}

}  // namespace

std::string random_hex(size_t bytes) {
  std::vector<unsigned char> buffer(bytes);
  if (RAND_bytes(buffer.data(), static_cast<int>(buffer.size())) != 1) {
    // Without a working CSPRNG no secret can be made safely; this never happens on Linux.
    std::abort();
  }
  return to_hex(buffer.data(), buffer.size());
}

std::string salted_sha256_hex(std::string_view salt_hex, std::string_view text) {
  std::string input;
  input.reserve(salt_hex.size() / 2 + text.size());
  for (size_t i = 0; i + 1 < salt_hex.size(); i += 2) {
    input.push_back(static_cast<char>(nibble(salt_hex[i]) << 4 | nibble(salt_hex[i + 1])));
  }
  input.append(text);
  const auto out = digest(input);
  OPENSSL_cleanse(input.data(), input.size());
  return to_hex(out.data(), out.size());
}

bool equal_secrets(std::string_view a, std::string_view b) {
  const auto da = digest(a);
  const auto db = digest(b);
  return CRYPTO_memcmp(da.data(), db.data(), da.size()) == 0;
}

}  // namespace rolter
