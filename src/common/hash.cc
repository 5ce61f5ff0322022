#include "common/hash.h"

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include <new>

namespace rolter {

static_assert(sizeof(XXH3_state_t) <= 640, "Hash64Stream::state_ too small for XXH3_state_t");

uint64_t hash64(std::string_view bytes, uint64_t seed) {
  return XXH3_64bits_withSeed(bytes.data(), bytes.size(), seed);
}

Hash64Stream::Hash64Stream(uint64_t seed) {
  auto* state = new (state_) XXH3_state_t;
  XXH3_64bits_reset_withSeed(state, seed);
}

Hash64Stream::~Hash64Stream() = default;

void Hash64Stream::update(std::string_view bytes) {
  XXH3_64bits_update(reinterpret_cast<XXH3_state_t*>(state_), bytes.data(), bytes.size());
}

uint64_t Hash64Stream::digest() const {
  return XXH3_64bits_digest(reinterpret_cast<const XXH3_state_t*>(state_));
}

}  // namespace rolter
