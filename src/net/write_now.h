// Writing without waiting: most writes of a proxy (a request head and body to the upstream, a
// response to the client) fit in the socket's send buffer, so they can complete in the call that
// starts them, with no asynchronous operation, timer or coroutine resumption around them.
//
//   size_t done = write_now(socket, buffers, ec);  // REQUIRES socket.non_blocking()
//   if (!ec && done < asio::buffer_size(buffers)) { ... write the rest asynchronously ... }
//
// Thread-safety: as the socket.
#pragma once

#include <boost/asio/ip/tcp.hpp>

#include "net/asio_fwd.h"

namespace rolter {

// Writes what the socket takes now. Returns the bytes written (all, some or none); `ec` is set
// only for a real failure (a reset or broken connection), never for a full send buffer.
// REQUIRES: socket.non_blocking() (else a full buffer would block the thread).
template <typename ConstBufferSequence>
size_t write_now(asio::ip::tcp::socket& socket, const ConstBufferSequence& buffers,
                 error_code& ec) {
  const size_t written = socket.write_some(buffers, ec);
  if (ec == asio::error::would_block || ec == asio::error::try_again) {
    ec = {};
    return 0;
  }
  return written;
}

}  // namespace rolter
