// One request/response on a kept-alive connection, for the bench's own load generators: writes
// the prebuilt request, reads the answer through Beast's parser without keeping its body, and
// notes when the head arrived and when the first SSE `data:` bytes did.
//
// Include only from .cc files: it pulls in Beast.
//
// Thread-safety: one exchange at a time per stream; the stream's executor runs it.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <chrono>
#include <string>
#include <string_view>

#include "net/asio_fwd.h"

namespace rolter::bench::overhead {

struct ExchangeResult {
  error_code error;  // transport or parse failure; the connection must be dropped
  unsigned status = 0;
  bool keep_alive = true;  // false: the server will close; reconnect before the next one
  bool saw_data = false;   // an SSE `data:` line arrived
  std::chrono::steady_clock::time_point first_data;  // when it did
  std::chrono::steady_clock::time_point done;        // when the whole answer was read

  bool ok() const { return !error && status == 200; }
};

// Connects `stream` to host:port within `timeout`.
Task<error_code> connect(beast::tcp_stream& stream, const std::string& host, uint16_t port,
                         std::chrono::steady_clock::duration timeout);

// Writes `request` and reads one answer, the whole within `timeout`.
Task<ExchangeResult> exchange(beast::tcp_stream& stream, beast::flat_buffer& buffer,
                              std::string_view request,
                              std::chrono::steady_clock::duration timeout);

}  // namespace rolter::bench::overhead
