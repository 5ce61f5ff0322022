// rolter-notify-listener: plays the service manager's end of sd_notify(3) for the Node tests,
// which cannot bind a unix datagram socket themselves.
//
//   rolter-notify-listener PATH
//
// Binds a datagram socket at PATH, prints "listening" once it is bound, then each message it
// receives as one JSON string per line (a message's lines are joined by "\n" inside the string),
// until stdin closes or it is killed. The socket file is removed on a clean exit.
//
// Thread-safety: a single-threaded program.
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <string>

#include "app/testing/notify_socket.h"
#include "common/json_escape.h"

namespace {

bool stdin_closed() {
  pollfd in{.fd = STDIN_FILENO, .events = POLLIN, .revents = 0};
  if (::poll(&in, 1, 0) <= 0) return false;
  char byte;
  return ::read(STDIN_FILENO, &byte, 1) <= 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: rolter-notify-listener PATH\n";
    return 2;
  }
  auto socket = rolter::testing::NotifySocket::bind(argv[1]);
  if (!socket) {
    std::cerr << "rolter-notify-listener: " << socket.error() << "\n";
    return 1;
  }
  std::cout << "listening" << std::endl;
  while (!stdin_closed()) {
    if (auto message = socket->receive(std::chrono::milliseconds(200))) {
      std::cout << rolter::json_string(*message) << std::endl;
    }
  }
  return 0;
}
