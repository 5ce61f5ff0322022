#include "proxy/access_log_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstring>

namespace rolter {
namespace {

// Opens `path` for appending. O_NONBLOCK only keeps open() itself from waiting (on a FIFO with no
// reader, which is refused); it is cleared again, so writes wait for the disk as usual.
tl::expected<int, std::string> open_for_append(const std::string& path) {
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0640);
  if (fd < 0) {
    return tl::unexpected("cannot open '" + path + "' for appending: " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode))) {
    ::close(fd);
    return tl::unexpected("'" + path + "' is not a file");
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

// Writes `line` and its newline to `fd`, finishing a short write. False (errno set) on failure.
bool write_line(int fd, std::string_view line) {
  char newline = '\n';
  iovec parts[2] = {{const_cast<char*>(line.data()), line.size()}, {&newline, 1}};
  int first = 0;
  while (first < 2) {
    const ssize_t n = ::writev(fd, parts + first, 2 - first);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    auto left = static_cast<size_t>(n);
    while (first < 2 && left >= parts[first].iov_len) left -= parts[first++].iov_len;
    if (first < 2) {
      parts[first].iov_base = static_cast<char*>(parts[first].iov_base) + left;
      parts[first].iov_len -= left;
    }
  }
  return true;
}

// Unique across every writer of the process, so that a thread's duplicate of one writer's file is
// never taken for another's (a writer made where a destroyed one was).
std::atomic<uint64_t> next_generation{1};

// Where the calling thread wrote its last line for one writer, of one generation: its own
// duplicate of the writer's file descriptor (closed when the thread ends or adopts another), or
// -1 for the console.
struct ThreadFile {
  const void* writer = nullptr;
  uint64_t generation = 0;
  int fd = -1;
  ~ThreadFile() {
    if (fd >= 0) ::close(fd);
  }
};
thread_local ThreadFile this_thread_file;

}  // namespace

AccessLogWriter::~AccessLogWriter() {
  MutexLock lock(mu_);
  if (fd_ >= 0) ::close(fd_);
}

int AccessLogWriter::swap(Kind kind, int fd, std::string path) {
  MutexLock lock(mu_);
  const int old = fd_;
  kind_ = kind;
  fd_ = fd;
  path_ = std::move(path);
  kind_hint_.store(kind, std::memory_order_relaxed);
  generation_.store(next_generation.fetch_add(1, std::memory_order_relaxed),
                    std::memory_order_release);
  return old;
}

bool AccessLogWriter::write_adopting(std::string_view line) {
  ThreadFile& mine = this_thread_file;
  if (mine.fd >= 0) ::close(mine.fd);
  mine.fd = ::fcntl(fd_, F_DUPFD_CLOEXEC, 0);
  if (mine.fd < 0) {
    mine.writer = nullptr;
    return write_line(fd_, line);
  }
  mine.writer = this;
  mine.generation = generation_.load(std::memory_order_relaxed);
  return write_line(mine.fd, line);
}

tl::expected<void, std::string> AccessLogWriter::set_destination(std::string_view destination) {
  MutexLock config(config_mu_);
  int old = -1;
  if (destination == "off") {
    old = swap(Kind::kOff, -1, {});
  } else if (destination == "stderr") {
    old = swap(Kind::kConsole, -1, {});
  } else if (destination.empty()) {
    return tl::unexpected(std::string("the access log's destination is empty"));
  } else {
    {
      MutexLock lock(mu_);
      if (kind_ == Kind::kFile && path_ == destination) return {};
    }
    std::string path(destination);
    auto fd = open_for_append(path);
    if (!fd) return tl::unexpected(std::move(fd.error()));
    old = swap(Kind::kFile, *fd, std::move(path));
  }
  if (old >= 0) ::close(old);
  return {};
}

tl::expected<void, std::string> AccessLogWriter::reopen() {
  MutexLock config(config_mu_);
  std::string path;
  {
    MutexLock lock(mu_);
    if (kind_ != Kind::kFile) return {};
    path = path_;
  }
  auto fd = open_for_append(path);
  if (!fd) return tl::unexpected(std::move(fd.error()));
  const int old = swap(Kind::kFile, *fd, std::move(path));
  if (old >= 0) ::close(old);
  return {};
}

void AccessLogWriter::write(std::string_view line) {
  int error = 0;
  ThreadFile& mine = this_thread_file;
  if (mine.writer == this && mine.generation == generation_.load(std::memory_order_acquire)) {
    // Where this thread wrote its last line is still the destination: no lock of the writer's.
    if (mine.fd < 0) {
      console_(line);
      return;
    }
    if (!write_line(mine.fd, line)) error = errno;
  } else {
    MutexLock lock(mu_);
    if (kind_ != Kind::kFile && mine.fd >= 0) {
      // The file is no longer the destination: this thread's copy need not keep it open.
      ::close(mine.fd);
      mine.fd = -1;
      mine.writer = nullptr;
    }
    switch (kind_) {
      case Kind::kOff:
        return;
      case Kind::kConsole:
        mine.writer = this;  // with fd -1: the console
        mine.generation = generation_.load(std::memory_order_relaxed);
        console_(line);
        return;
      case Kind::kFile:
        if (!write_adopting(line)) error = errno;
        break;
    }
  }
  if (error == 0) {
    if (failing_.load(std::memory_order_relaxed)) failing_.store(false, std::memory_order_relaxed);
    return;
  }
  failed_writes_.fetch_add(1, std::memory_order_relaxed);
  if (!failing_.exchange(true, std::memory_order_relaxed)) {
    spdlog::warn(
        "access log: a line could not be written ({}); lines are dropped until writes "
        "succeed again",
        std::strerror(error));
  }
}

std::string AccessLogWriter::destination() const {
  MutexLock lock(mu_);
  switch (kind_) {
    case Kind::kOff:
      return "off";
    case Kind::kConsole:
      return "stderr";
    case Kind::kFile:
      break;
  }
  return path_;
}

}  // namespace rolter
