// A mutex that Clang's thread-safety analysis understands, and the annotations that name what it
// guards. libstdc++'s std::mutex carries no capability attribute, so state guarded by it cannot be
// checked; rolter::Mutex wraps one and says what it is.
//
// Usage:
//   class Table {
//    public:
//     void put(int v) EXCLUDES(mu_) {
//       MutexLock lock(mu_);
//       values_.push_back(v);
//     }
//    private:
//     Mutex mu_;
//     std::vector<int> values_ GUARDED_BY(mu_);
//   };
//
// State read by many threads at once and written by few uses SharedMutex, held shared by a
// ReaderMutexLock and exclusively by a WriterMutexLock:
//   mutable SharedMutex mu_;
//   std::vector<int> values_ GUARDED_BY(mu_);
//   size_t size() const { ReaderMutexLock lock(mu_); return values_.size(); }
//
// `scripts/check-thread-safety` compiles every file that uses these with clang's
// -Wthread-safety and fails on a finding. Under GCC the macros expand to nothing.
//
// Thread safety: Mutex and SharedMutex are mutexes; the locks are owned by one thread for one
// scope.
#pragma once

#include <condition_variable>
#include <mutex>
#include <shared_mutex>
#include <utility>

#if defined(__clang__)
#define ROLTER_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define ROLTER_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) ROLTER_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY ROLTER_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) ROLTER_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) ROLTER_THREAD_ANNOTATION(pt_guarded_by(x))
#define REQUIRES(...) ROLTER_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) ROLTER_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
#define ACQUIRE(...) ROLTER_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) ROLTER_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) ROLTER_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) ROLTER_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) ROLTER_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define EXCLUDES(...) ROLTER_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define RETURN_CAPABILITY(x) ROLTER_THREAD_ANNOTATION(lock_returned(x))
#define NO_THREAD_SAFETY_ANALYSIS ROLTER_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace rolter {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return mu_.try_lock(); }

 private:
  friend class MutexLock;
  std::mutex mu_;
};

// Holds a Mutex for its scope. wait() lets a std::condition_variable release and retake it; the
// analysis treats the mutex as held throughout, which is what the caller's code may assume.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : lock_(mu.mu_) {}
  ~MutexLock() RELEASE() = default;
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  template <typename Predicate>
  void wait(std::condition_variable& cv, Predicate done) {
    cv.wait(lock_, std::move(done));
  }
  template <typename Duration, typename Predicate>
  bool wait_for(std::condition_variable& cv, Duration timeout, Predicate done) {
    return cv.wait_for(lock_, timeout, std::move(done));
  }

 private:
  std::unique_lock<std::mutex> lock_;
};

// A reader-writer mutex: many holders in shared mode, or one in exclusive mode.
class CAPABILITY("mutex") SharedMutex {
 public:
  SharedMutex() = default;
  SharedMutex(const SharedMutex&) = delete;
  SharedMutex& operator=(const SharedMutex&) = delete;

  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  void lock_shared() ACQUIRE_SHARED() { mu_.lock_shared(); }
  void unlock_shared() RELEASE_SHARED() { mu_.unlock_shared(); }

 private:
  std::shared_mutex mu_;
};

// Holds a SharedMutex exclusively for its scope.
class SCOPED_CAPABILITY WriterMutexLock {
 public:
  explicit WriterMutexLock(SharedMutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~WriterMutexLock() RELEASE() { mu_.unlock(); }
  WriterMutexLock(const WriterMutexLock&) = delete;
  WriterMutexLock& operator=(const WriterMutexLock&) = delete;

 private:
  SharedMutex& mu_;
};

// Holds a SharedMutex in shared mode for its scope.
class SCOPED_CAPABILITY ReaderMutexLock {
 public:
  explicit ReaderMutexLock(SharedMutex& mu) ACQUIRE_SHARED(mu) : mu_(mu) { mu_.lock_shared(); }
  ~ReaderMutexLock() RELEASE() { mu_.unlock_shared(); }
  ReaderMutexLock(const ReaderMutexLock&) = delete;
  ReaderMutexLock& operator=(const ReaderMutexLock&) = delete;

 private:
  SharedMutex& mu_;
};

}  // namespace rolter
