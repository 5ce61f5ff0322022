// NotifySocket: the service manager's end of sd_notify(3), for tests. It binds a unix datagram
// socket at a path; a process started with NOTIFY_SOCKET set to that path sends its state changes
// (READY=1, RELOADING=1, STOPPING=1, ...) here, one datagram per message.
//
//   auto socket = NotifySocket::bind(dir + "/notify");
//   ::setenv("NOTIFY_SOCKET", socket->path().c_str(), 1);
//   notify_ready();
//   EXPECT_EQ(socket->receive(std::chrono::seconds(5)), "READY=1");
//
// Thread-safety: one thread at a time.
#pragma once

#include <tl/expected.hpp>

#include <chrono>
#include <optional>
#include <string>

namespace rolter::testing {

class NotifySocket {
 public:
  // Binds a SOCK_DGRAM socket at `path` (which must not exist). Returns a message on failure.
  static tl::expected<NotifySocket, std::string> bind(const std::string& path);
  NotifySocket(NotifySocket&& other) noexcept;
  NotifySocket& operator=(NotifySocket&&) = delete;
  ~NotifySocket();

  const std::string& path() const { return path_; }
  // The next datagram, or nullopt when none arrives within `timeout` (negative: wait forever).
  std::optional<std::string> receive(std::chrono::milliseconds timeout);

 private:
  NotifySocket(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;
};

}  // namespace rolter::testing
