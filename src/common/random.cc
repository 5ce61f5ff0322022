#include "common/random.h"

#include <random>

namespace rolter {
namespace {

uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

SeededRandom::SeededRandom(uint64_t seed) {
  for (auto& word : s_) word = splitmix64(seed);
}

uint64_t SeededRandom::next_u64() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

uint64_t ThreadLocalRandom::next_u64() {
  thread_local SeededRandom generator{(static_cast<uint64_t>(std::random_device{}()) << 32) ^
                                      std::random_device{}()};
  return generator.next_u64();
}

Random& default_random() {
  static ThreadLocalRandom random;
  return random;
}

}  // namespace rolter
