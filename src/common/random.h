// Random: the injected source of randomness for strategies and the simulator.
//
// Thread-safety: ThreadLocalRandom may be shared by all threads (each thread draws from its own
// generator). SeededRandom is for tests and single-threaded simulation: not thread-safe, and fully
// deterministic for a given seed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rolter {

class Random {
 public:
  virtual ~Random() = default;
  // Returns 64 uniformly distributed bits.
  virtual uint64_t next_u64() = 0;

  // Returns a uniform integer in [0, n). REQUIRES: n > 0.
  size_t uniform(size_t n) {
    // Lemire's multiply-shift; the bias for n far below 2^64 is negligible for routing.
    return static_cast<size_t>((static_cast<unsigned __int128>(next_u64()) * n) >> 64);
  }
  // Returns a uniform double in [0, 1).
  double uniform_double() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
};

// xoshiro256** seeded through splitmix64. Deterministic; not thread-safe.
class SeededRandom final : public Random {
 public:
  explicit SeededRandom(uint64_t seed);
  uint64_t next_u64() override;

 private:
  uint64_t s_[4];
};

// Each calling thread draws from its own SeededRandom, seeded once from std::random_device.
class ThreadLocalRandom final : public Random {
 public:
  uint64_t next_u64() override;
};

// Process-wide ThreadLocalRandom.
Random& default_random();

}  // namespace rolter
