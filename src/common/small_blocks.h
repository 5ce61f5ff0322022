// Small blocks: a thread's cache of freed small heap blocks, by size class, and an allocator over
// it, for containers that make and free a few small blocks per request (Beast's header fields:
// one block per field, one for the target, one for a reason phrase).
//
// A block freed on a thread goes to that thread's cache, up to kMaxCachedPerClass per class;
// the rest, and every block larger than kLargestClass bytes, go back to the heap. A thread's
// cache is returned to the heap when the thread ends. So a worker that serves requests one after
// another reuses the same few blocks and calls the heap for none of them, as Asio does for its
// handlers and coroutine frames.
//
// Under AddressSanitizer every block goes to and from the heap: a cache would hide a use after
// free from it.
//
// Thread-safety: the cache is thread-local; a block may be freed on another thread than the one
// that made it (it then joins that thread's cache).
#pragma once

#include <cstddef>
#include <new>

namespace rolter {
namespace small_blocks {

inline constexpr size_t kLargestClass = 1024;
inline constexpr size_t kMaxCachedPerClass = 1024;

// False under AddressSanitizer (above).
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kCaching = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kCaching = false;
#else
inline constexpr bool kCaching = true;
#endif
#else
inline constexpr bool kCaching = true;
#endif

// At least `bytes` bytes, aligned for any type up to the default new alignment. Throws
// std::bad_alloc as operator new does.
void* allocate(size_t bytes);
// `p` from allocate(`bytes`), the same `bytes`.
void deallocate(void* p, size_t bytes) noexcept;

}  // namespace small_blocks

// An allocator over small_blocks. Stateless: every instance is interchangeable.
template <typename T>
class SmallBlockAllocator {
 public:
  using value_type = T;
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "over-aligned types need their own");

  SmallBlockAllocator() noexcept = default;
  template <typename U>
  SmallBlockAllocator(const SmallBlockAllocator<U>&) noexcept {}  // NOLINT: rebinding converts

  T* allocate(size_t n) { return static_cast<T*>(small_blocks::allocate(n * sizeof(T))); }
  void deallocate(T* p, size_t n) noexcept { small_blocks::deallocate(p, n * sizeof(T)); }

  template <typename U>
  bool operator==(const SmallBlockAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace rolter
