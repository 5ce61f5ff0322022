// Secrets of the control plane: admin tokens and API keys are random, shown once, and kept only
// as salted SHA-256 digests; every comparison takes constant time.
//
// Randomness comes from OpenSSL's CSPRNG, not the injected Random of the routing code: these
// values guard access, so they must not be predictable even to a test.
//
// Thread-safety: pure functions (RAND_bytes is thread-safe).
#pragma once

#include <string>
#include <string_view>

namespace rolter {

// `bytes` random bytes as lowercase hex.
std::string random_hex(size_t bytes);

// Lowercase hex of SHA-256(bytes of `salt_hex` || text).
std::string salted_sha256_hex(std::string_view salt_hex, std::string_view text);

// Whether the two strings are equal, in time that depends only on their digests' length.
bool equal_secrets(std::string_view a, std::string_view b);

}  // namespace rolter
