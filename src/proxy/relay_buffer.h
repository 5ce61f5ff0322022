// RelayBuffer: the fixed buffer a relay reads an upstream body into, reused per thread.
//
// A relay holds one for its whole body; a worker relaying N bodies at once holds N. A released
// buffer goes back to its thread's list (up to kKept of them, 1 MiB), so steady traffic takes
// buffers from the list and never from the heap. Keeping the buffer off the relay's coroutine
// frame also keeps that frame small enough for Asio to recycle.
//
// Thread-safety: a RelayBuffer must be released on the thread that took it (a worker's relay runs
// on that worker's thread from start to end).
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <vector>

namespace rolter {

class RelayBuffer {
 public:
  static constexpr size_t kBytes =
      16 * 1024;  // one SSE event is tens of bytes, an answer a few KiB
  static constexpr size_t kKept = 64;

  RelayBuffer() {
    auto& list = free_list();
    if (list.empty()) {
      storage_ = std::make_unique<Storage>();
    } else {
      storage_ = std::move(list.back());
      list.pop_back();
    }
  }
  ~RelayBuffer() {
    auto& list = free_list();
    if (list.size() < kKept) list.push_back(std::move(storage_));
  }
  RelayBuffer(const RelayBuffer&) = delete;
  RelayBuffer& operator=(const RelayBuffer&) = delete;

  char* data() { return storage_->data(); }
  static constexpr size_t size() { return kBytes; }

 private:
  using Storage = std::array<char, kBytes>;
  static std::vector<std::unique_ptr<Storage>>& free_list() {
    thread_local std::vector<std::unique_ptr<Storage>> list;
    return list;
  }
  std::unique_ptr<Storage> storage_;
};

}  // namespace rolter
