// AccessLogWriter: where the access log's lines go (SPEC §17: server.access_log = "stderr",
// "off" or a file path), and the reopening that log rotation needs.
//
//   AccessLogWriter log(write_to_console);
//   log.set_destination("/var/log/rolter/access.log");  // opened for appending, created 0640
//   log.write(R"({"event":"request",...})");            // from any worker
//   // logrotate renamed the file, then sent SIGUSR1:
//   log.reopen();                                       // the path again: a new, empty file
//
// Every line is written whole, with its newline, by one write(2) to a descriptor opened with
// O_APPEND: the kernel appends each write at the file's end in one piece, so lines from any number
// of threads never interleave and are never torn. Each thread writes through its own duplicate of
// the file's descriptor, made under the writer's mutex at its first line and again after every
// change of destination (a generation number, read without a lock, tells): the workers share no
// lock while they log to a file. Reopening opens the new file before it takes the mutex and closes
// the writer's old descriptor after it lets go; a thread's duplicate of the old file is closed at
// that thread's next line, which goes to the new file. A line goes to the old file or to the new
// one, never nowhere. Changing the destination (a reload) works the same way.
//
// "stderr" lines go through `console`: the process's console logger (spdlog) serialises them with
// the application's own log lines on stderr. A thread takes this writer's mutex only for its first
// line after a change of destination.
//
// Errors: a destination that cannot be opened is refused with a message and the previous one
// stays; a write that fails (a full disk) drops that line, counts it, and the first failure of a
// run is reported on the application log.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <tl/expected.hpp>

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/mutex.h"

namespace rolter {

class AccessLogWriter {
 public:
  // Writes one line (without its newline) to the console.
  using ConsoleWrite = void (*)(std::string_view line);

  // Starts with destination "stderr".
  explicit AccessLogWriter(ConsoleWrite console) : console_(console) {}
  ~AccessLogWriter();
  AccessLogWriter(const AccessLogWriter&) = delete;
  AccessLogWriter& operator=(const AccessLogWriter&) = delete;

  // "off", "stderr" or a file path. A path is opened for appending, created with mode 0640 (less
  // the umask) when missing. The destination the writer already has is kept as it is: a reload
  // that names the same file does not reopen it. On failure, the message names the file and why,
  // and the previous destination stays.
  tl::expected<void, std::string> set_destination(std::string_view destination)
      EXCLUDES(config_mu_, mu_);

  // A file destination: opens its path again, and from then on writes there (after a rotation
  // renamed the old file). Any other destination: nothing to do. On failure the old file stays in
  // use and the message says why.
  tl::expected<void, std::string> reopen() EXCLUDES(config_mu_, mu_);

  // Writes `line` and a newline. REQUIRES: `line` holds no newline.
  void write(std::string_view line) EXCLUDES(mu_);

  // False when the destination is "off": a caller can skip building its line.
  bool enabled() const { return kind_hint_.load(std::memory_order_relaxed) != Kind::kOff; }

  // "off", "stderr" or the file's path.
  std::string destination() const EXCLUDES(mu_);

  // Lines lost to failed writes, since the start.
  uint64_t failed_writes() const { return failed_writes_.load(std::memory_order_relaxed); }

 private:
  enum class Kind : uint8_t { kOff, kConsole, kFile };

  // Installs the new destination; returns the descriptor it replaces (-1 for none) for the caller
  // to close once the mutex is released.
  int swap(Kind kind, int fd, std::string path) REQUIRES(config_mu_) EXCLUDES(mu_);
  // Writes `line` to the file, through the calling thread's duplicate of fd_ (made now), or through
  // fd_ itself when no descriptor is left to duplicate it. False (errno set) on failure.
  bool write_adopting(std::string_view line) REQUIRES(mu_);

  const ConsoleWrite console_;
  mutable Mutex mu_;
  Kind kind_ GUARDED_BY(mu_) = Kind::kConsole;
  int fd_ GUARDED_BY(mu_) = -1;
  std::string path_ GUARDED_BY(mu_);
  // Held by set_destination() and reopen() from their open to their swap, so that two of them
  // cannot cross (a reopen putting back the path a new destination just replaced). Taken before
  // mu_, never after.
  Mutex config_mu_;
  std::atomic<Kind> kind_hint_{Kind::kConsole};  // kind_, readable without the mutex
  // Changes with every swap, to a number no writer of the process had before: a thread's duplicate
  // made under an older one is stale. Written under mu_, read without it.
  std::atomic<uint64_t> generation_{0};
  std::atomic<uint64_t> failed_writes_{0};
  std::atomic<bool> failing_{false};  // the last write failed: the next failure is not reported
};

}  // namespace rolter
