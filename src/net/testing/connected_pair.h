// A connected pair of loopback TCP sockets for the net/ unit tests: the first wrapped in the
// TimedStream under test, the second the peer the test writes to and closes.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <utility>

#include "net/timed_stream.h"

namespace rolter {

inline std::pair<TimedStream, asio::ip::tcp::socket> connected_pair(asio::io_context& io) {
  using asio::ip::tcp;
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
  tcp::socket client(io);
  client.connect(acceptor.local_endpoint());
  tcp::socket server = acceptor.accept();
  return {TimedStream(std::move(client)), std::move(server)};
}

}  // namespace rolter
