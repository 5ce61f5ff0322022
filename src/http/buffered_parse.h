// Parsing what a read buffer already holds, without I/O.
//
// A small request or response usually arrives whole in one read: the head and the body are then
// in the buffer, and an asynchronous read to parse them would only post a completion, arm a timer
// and resume a coroutine for nothing. parse_buffered() hands those bytes to the parser at once;
// the caller reads asynchronously only when the parser still wants more.
//
// Thread-safety: as the parser and buffer it is given.
#pragma once

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>

#include "net/asio_fwd.h"

namespace rolter {

enum class ParseUntil { kHeader, kMessage };

// Feeds `parser` the bytes in `buffer` (consuming what it used) until the header, or the whole
// message, is done or the buffer runs dry. Returns the parser's error: none when it simply wants
// more bytes, http::error::need_buffer when a buffer_body's buffer is full, or a parse error
// (bad framing, header_limit, body_limit, ...) exactly as an asynchronous read would report it.
template <bool isRequest>
error_code parse_buffered(beast::http::basic_parser<isRequest>& parser, beast::flat_buffer& buffer,
                          ParseUntil until) {
  error_code ec;
  while (buffer.size() > 0 && !parser.is_done() &&
         !(until == ParseUntil::kHeader && parser.is_header_done())) {
    const size_t used = parser.put(buffer.data(), ec);
    buffer.consume(used);
    if (ec == beast::http::error::need_more) return {};
    if (ec || used == 0) break;
  }
  return ec;
}

}  // namespace rolter
