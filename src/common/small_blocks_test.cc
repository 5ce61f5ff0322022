#include "common/small_blocks.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace rolter {
namespace {

TEST(SmallBlocksTest, AFreedBlockIsTheNextOfItsClassOnTheSameThread) {
  void* a = small_blocks::allocate(40);
  std::memset(a, 0xab, 40);
  small_blocks::deallocate(a, 40);
  void* b = small_blocks::allocate(64);  // the same class (33..64 bytes)
  if (small_blocks::kCaching) {
    EXPECT_EQ(a, b);
  }
  void* c = small_blocks::allocate(65);  // the next class: never the block just taken
  EXPECT_NE(b, c);
  small_blocks::deallocate(b, 64);
  small_blocks::deallocate(c, 65);
}

TEST(SmallBlocksTest, LargeBlocksAndEveryClassHoldWhatWasAsked) {
  std::vector<std::pair<void*, size_t>> blocks;
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{31}, size_t{32}, size_t{33}, size_t{200},
                       size_t{512}, size_t{513}, size_t{100000}}) {
    void* p = small_blocks::allocate(bytes);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % __STDCPP_DEFAULT_NEW_ALIGNMENT__, 0u);
    std::memset(p, static_cast<int>(bytes & 0xff), bytes);
    blocks.emplace_back(p, bytes);
  }
  for (const auto& [p, bytes] : blocks) {
    for (size_t i = 0; i < bytes; i += 97) {
      ASSERT_EQ(static_cast<unsigned char*>(p)[i], bytes & 0xff) << bytes;
    }
  }
  for (const auto& [p, bytes] : blocks) small_blocks::deallocate(p, bytes);
}

// Blocks made on one thread and freed on another, and containers over the allocator on several
// threads at once: nothing is lost or shared (ASan and the thread sanitizer's tests see it).
TEST(SmallBlocksTest, BlocksCrossThreadsAndContainersUseTheAllocator) {
  std::vector<void*> made;
  std::thread maker([&] {
    for (int i = 0; i < 100; ++i) made.push_back(small_blocks::allocate(48));
  });
  maker.join();
  std::thread freer([&] {
    for (void* p : made) small_blocks::deallocate(p, 48);
  });
  freer.join();

  using String = std::basic_string<char, std::char_traits<char>, SmallBlockAllocator<char>>;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      std::map<int, String, std::less<>, SmallBlockAllocator<std::pair<const int, String>>> m;
      for (int i = 0; i < 2000; ++i) m.emplace(i, String(static_cast<size_t>(i % 300), 'a' + t));
      for (int i = 0; i < 2000; ++i) {
        ASSERT_EQ(m.at(i), String(static_cast<size_t>(i % 300), 'a' + t));
      }
    });
  }
  for (auto& th : threads) th.join();
}

}  // namespace
}  // namespace rolter
