// Global operator new and delete that count, for the tests that prove a path allocates nothing.
// Linking this library replaces them in the whole test binary (one binary per such test): they
// count while `counting` is on, and otherwise only allocate.
//
//   rolter::alloc_count::allocations = 0;
//   rolter::alloc_count::counting = true;
//   ... the code under test ...
//   rolter::alloc_count::counting = false;
//   EXPECT_EQ(rolter::alloc_count::allocations.load(), 0);
//
// Thread-safety: both counters are atomics; every thread's allocations count.
#pragma once

#include <atomic>

namespace rolter::alloc_count {

extern std::atomic<bool> counting;
extern std::atomic<long> allocations;

}  // namespace rolter::alloc_count
