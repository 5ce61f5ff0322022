#include "app/testing/notify_socket.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace rolter::testing {

tl::expected<NotifySocket, std::string> NotifySocket::bind(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path) return tl::unexpected("path too long: " + path);
  std::memcpy(address.sun_path, path.data(), path.size());
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return tl::unexpected(std::string("socket: ") + std::strerror(errno));
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    std::string message = "bind " + path + ": " + std::strerror(errno);
    ::close(fd);
    return tl::unexpected(message);
  }
  return NotifySocket(fd, path);
}

NotifySocket::NotifySocket(NotifySocket&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

NotifySocket::~NotifySocket() {
  if (fd_ < 0) return;
  ::close(fd_);
  ::unlink(path_.c_str());
}

std::optional<std::string> NotifySocket::receive(std::chrono::milliseconds timeout) {
  pollfd ready{.fd = fd_, .events = POLLIN, .revents = 0};
  int polled;
  do {
    polled = ::poll(&ready, 1, timeout.count() < 0 ? -1 : static_cast<int>(timeout.count()));
  } while (polled < 0 && errno == EINTR);
  if (polled <= 0) return std::nullopt;
  // sd_notify's messages are short; 4 KiB holds any this process is sent.
  char buffer[4096];
  const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
  if (n < 0) return std::nullopt;
  return std::string(buffer, static_cast<size_t>(n));
}

}  // namespace rolter::testing
