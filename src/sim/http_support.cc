#include "sim/http_support.h"

#include <spdlog/spdlog.h>

#include <boost/asio/write.hpp>

namespace rolter::sim {

std::string_view path_of(std::string_view target) {
  const size_t q = target.find('?');
  return q == std::string_view::npos ? target : target.substr(0, q);
}

HttpResponse make_response(const HttpRequest& req, http::status status,
                           std::string_view content_type, std::string body) {
  HttpResponse res{status, req.version()};
  res.set(http::field::server, "rolter-sim");
  if (!content_type.empty()) res.set(http::field::content_type, content_type);
  res.keep_alive(req.keep_alive());
  res.body() = std::move(body);
  res.prepare_payload();
  return res;
}

bool is_http_parse_error(const beast::error_code& ec) {
  if (ec.category() != http::make_error_code(http::error::end_of_stream).category()) return false;
  // end_of_stream: the peer closed between requests; partial_message: it closed mid-request.
  return ec != http::error::end_of_stream && ec != http::error::partial_message;
}

asio::awaitable<bool> write_response(tcp::socket& socket, HttpResponse& res) {
  http::response_serializer<http::string_body> serializer{res};
  auto [ec, n] = co_await http::async_write(socket, serializer, kAwaitTuple);
  // A write that was cancelled after its last byte went out still delivered the response.
  co_return !ec || serializer.is_done();
}

void close_gracefully(tcp::socket& socket) {
  beast::error_code ec;
  socket.shutdown(tcp::socket::shutdown_send, ec);
  socket.close(ec);
}

void log_if_exception(std::exception_ptr error) {
  if (!error) return;
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    spdlog::error("rolter-sim: coroutine failed: {}", e.what());
  } catch (...) {
    spdlog::error("rolter-sim: coroutine failed with an unknown exception");
  }
}

}  // namespace rolter::sim
