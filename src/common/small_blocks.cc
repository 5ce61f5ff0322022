#include "common/small_blocks.h"

#include <array>
#include <cstdint>

namespace rolter::small_blocks {
namespace {

// Classes of 32, 64, 128, 256, 512 and 1024 bytes.
constexpr size_t kSmallestClass = 32;
constexpr size_t kClasses = 6;
static_assert(kSmallestClass << (kClasses - 1) == kLargestClass);

// The class of `bytes` (≤ kLargestClass), and its size.
size_t class_of(size_t bytes) {
  size_t c = 0;
  for (size_t size = kSmallestClass; size < bytes; size <<= 1) ++c;
  return c;
}
constexpr size_t class_size(size_t c) { return kSmallestClass << c; }

struct FreeBlock {
  FreeBlock* next;
};

// Set while the thread's cache exists: a block freed during the thread's exit, after the cache is
// gone, goes straight back to the heap. (A trivially destructible thread_local: never destroyed.)
thread_local bool t_cache_alive = false;

class Cache {
 public:
  Cache() { t_cache_alive = true; }
  ~Cache() {
    t_cache_alive = false;
    for (size_t c = 0; c < kClasses; ++c) {
      while (FreeBlock* b = heads_[c]) {
        heads_[c] = b->next;
        ::operator delete(b);
      }
    }
  }
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  void* take(size_t c) {
    FreeBlock* b = heads_[c];
    if (b == nullptr) return ::operator new(class_size(c));
    heads_[c] = b->next;
    --counts_[c];
    return b;
  }
  void give(void* p, size_t c) {
    if (counts_[c] >= kMaxCachedPerClass) {
      ::operator delete(p);
      return;
    }
    heads_[c] = new (p) FreeBlock{heads_[c]};
    ++counts_[c];
  }

 private:
  std::array<FreeBlock*, kClasses> heads_{};
  std::array<size_t, kClasses> counts_{};
};

Cache& cache() {
  thread_local Cache c;
  return c;
}

}  // namespace

void* allocate(size_t bytes) {
  if (!kCaching || bytes > kLargestClass) return ::operator new(bytes);
  return cache().take(class_of(bytes));
}

void deallocate(void* p, size_t bytes) noexcept {
  if (p == nullptr) return;
  if (!kCaching || bytes > kLargestClass) {
    ::operator delete(p);
    return;
  }
  const size_t c = class_of(bytes);
  if (!t_cache_alive) {
    ::operator delete(p);
    return;
  }
  cache().give(p, c);
}

}  // namespace rolter::small_blocks
