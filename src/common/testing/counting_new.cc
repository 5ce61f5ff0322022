// Global operator new and delete that count while rolter::alloc_count::counting is on.
#include "common/testing/counting_new.h"

#include <cstddef>
#include <cstdlib>
#include <new>

namespace rolter::alloc_count {

std::atomic<bool> counting{false};
std::atomic<long> allocations{0};

}  // namespace rolter::alloc_count

namespace {

void* counted_alloc(std::size_t size, std::size_t alignment) {
  if (rolter::alloc_count::counting.load(std::memory_order_relaxed)) {
    rolter::alloc_count::allocations.fetch_add(1, std::memory_order_relaxed);
  }
  if (size == 0) size = 1;
  return alignment > alignof(std::max_align_t)
             ? std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment)
             : std::malloc(size);
}

// Out of line: once operator delete is inlined into a caller, GCC sees free() applied to the
// result of operator new and warns (-Wmismatched-new-delete), though here both sides are ours.
[[gnu::noinline]] void counted_free(void* p) noexcept { std::free(p); }

}  // namespace

void* operator new(std::size_t size) {
  if (void* p = counted_alloc(size, 0)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  if (void* p = counted_alloc(size, 0)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return counted_alloc(size, 0);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return counted_alloc(size, 0);
}
void* operator new(std::size_t size, std::align_val_t alignment) {
  if (void* p = counted_alloc(size, static_cast<std::size_t>(alignment))) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size, std::align_val_t alignment) {
  if (void* p = counted_alloc(size, static_cast<std::size_t>(alignment))) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { counted_free(p); }
void operator delete[](void* p) noexcept { counted_free(p); }
void operator delete(void* p, std::size_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::size_t) noexcept { counted_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { counted_free(p); }
