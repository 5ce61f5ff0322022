// Shorthands for the Asio/Beast names used across the I/O modules (server/, upstream/, proxy/).
//
// Include only from .cc files and from headers of those I/O modules: it pulls in Beast.
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/tcp_stream.hpp>

namespace rolter {

class TimedStream;  // net/timed_stream.h

namespace asio = boost::asio;
namespace beast = boost::beast;
using error_code = boost::system::error_code;

template <typename T = void>
using Task = asio::awaitable<T>;

// Completion token for coroutines that get errors as values instead of exceptions.
inline constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);

}  // namespace rolter
