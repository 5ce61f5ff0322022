// Fast non-cryptographic 64-bit hashing (xxHash3) used for digests, rings and keys.
//
// Thread-safety: pure functions. Hash64Stream is a value type owned by one thread.
#pragma once

#include <cstdint>
#include <string_view>

namespace rolter {

// xxh3-64 of bytes, with an optional seed.
uint64_t hash64(std::string_view bytes, uint64_t seed = 0);

// Mixes two 64-bit values into one (order-sensitive).
inline uint64_t hash_combine(uint64_t a, uint64_t b) {
  // splitmix64 finaliser over a ^ rotated b: cheap, and good enough for ring points and keys.
  uint64_t z = a ^ ((b << 31) | (b >> 33)) ^ 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Incremental xxh3-64 over several pieces; equal to hash64 of their concatenation.
class Hash64Stream {
 public:
  explicit Hash64Stream(uint64_t seed = 0);
  ~Hash64Stream();
  Hash64Stream(const Hash64Stream&) = delete;
  Hash64Stream& operator=(const Hash64Stream&) = delete;

  void update(std::string_view bytes);
  uint64_t digest() const;

 private:
  alignas(64) unsigned char state_[640];  // XXH3_state_t, kept opaque to keep xxhash.h private
};

}  // namespace rolter
