// Small HTTP helpers shared by the simulator's engine and control servers. Includes Beast and
// Asio: include it only from the simulator's server .cc files.
//
// Thread-safety: free functions; a socket passed in must only be used from its own executor.
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <exception>
#include <string>
#include <string_view>

namespace rolter::sim {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

using HttpRequest = http::request<http::string_body>;
using HttpResponse = http::response<http::string_body>;

// Completion token for the normal flow: errors come back as values, never as exceptions.
inline constexpr auto kAwaitTuple = asio::as_tuple(asio::use_awaitable);

// Largest request body accepted (prompts with long contexts are big; 64 MiB is far beyond any).
inline constexpr uint64_t kMaxBodyBytes = 64ull << 20;
// Largest request header block: generous for gateways that add tracing headers.
inline constexpr uint32_t kMaxHeaderBytes = 64u << 10;

// The path part of a request target ("/v1/models?x=1" -> "/v1/models").
std::string_view path_of(std::string_view target);

// A response to `req` with the given status, content type and body, keep-alive mirroring the
// request, and Content-Length set.
HttpResponse make_response(const HttpRequest& req, http::status status,
                           std::string_view content_type, std::string body);

// True when a read failed because the bytes were not valid HTTP (answer 400), as opposed to the
// peer going away or the read being cancelled.
bool is_http_parse_error(const beast::error_code& ec);

// Writes `res`; false when the peer is gone.
asio::awaitable<bool> write_response(tcp::socket& socket, HttpResponse& res);

// Sends FIN and closes, ignoring errors (the peer may already be gone).
void close_gracefully(tcp::socket& socket);

// Completion handler for detached coroutines: an escaped exception is a bug, so log it.
void log_if_exception(std::exception_ptr error);

}  // namespace rolter::sim
