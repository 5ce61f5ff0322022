#include "control/secrets.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <array>
#include <cstdlib>
#include <vector>

#include "common/hex.h"

namespace rolter {
namespace {

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
  return hex_encode(buffer.data(), buffer.size());
}

std::string salted_sha256_hex(std::string_view salt_hex, std::string_view text) {
  std::string input = hex_decode(salt_hex).value_or("");  // salts are made here, as hex
  input.append(text);
  const auto out = digest(input);
  OPENSSL_cleanse(input.data(), input.size());
  return hex_encode(out.data(), out.size());
}

bool equal_secrets(std::string_view a, std::string_view b) {
  const auto da = digest(a);
  const auto db = digest(b);
  return CRYPTO_memcmp(da.data(), db.data(), da.size()) == 0;
}

}  // namespace rolter
