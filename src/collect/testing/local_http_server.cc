#include "collect/testing/local_http_server.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <thread>
#include <utility>

#include "net/asio_fwd.h"

namespace rolter {

namespace http = beast::http;

struct LocalHttpServer::Running {
  explicit Running(Handler h)
      : handle(std::move(h)), acceptor(io, {asio::ip::make_address("127.0.0.1"), 0}) {}

  Task<void> accept_loop() {
    for (;;) {
      auto [ec, socket] = co_await acceptor.async_accept(kNoThrow);
      if (ec) co_return;
      asio::co_spawn(io, serve(beast::tcp_stream(std::move(socket))), asio::detached);
    }
  }

  Task<void> serve(beast::tcp_stream stream) {
    beast::flat_buffer buffer;
    http::request<http::string_body> request;
    auto [read_ec, read] = co_await http::async_read(stream, buffer, request, kNoThrow);
    if (read_ec) co_return;
    const HttpAnswer answer = handle(SeenRequest{
        .target = std::string(request.target()),
        .content_type = std::string(request[http::field::content_type]),
        .body = std::move(request.body())});
    http::response<http::string_body> response{static_cast<http::status>(answer.status), 11};
    if (!answer.content_type.empty()) response.set(http::field::content_type, answer.content_type);
    response.body() = answer.body;
    response.keep_alive(false);
    response.prepare_payload();
    co_await http::async_write(stream, response, kNoThrow);
  }

  Handler handle;
  asio::io_context io{1};
  asio::ip::tcp::acceptor acceptor;
  std::thread thread;
};

LocalHttpServer::LocalHttpServer(Handler handle)
    : running_(std::make_unique<Running>(std::move(handle))) {
  asio::co_spawn(running_->io, running_->accept_loop(), asio::detached);
  running_->thread = std::thread([r = running_.get()] { r->io.run(); });
}

LocalHttpServer::~LocalHttpServer() {
  running_->io.stop();
  running_->thread.join();
}

std::string LocalHttpServer::url() const {
  return "http://127.0.0.1:" + std::to_string(running_->acceptor.local_endpoint().port());
}

FixedHttpServer::FixedHttpServer()
    : server_([this](const SeenRequest& request) {
        ++requests_;
        std::lock_guard lock(mu_);
        last_target_ = request.target;
        return HttpAnswer{.status = status_, .body = body_};
      }) {}

void FixedHttpServer::answer(unsigned status, std::string body) {
  std::lock_guard lock(mu_);
  status_ = status;
  body_ = std::move(body);
}

std::string FixedHttpServer::last_target() const {
  std::lock_guard lock(mu_);
  return last_target_;
}

}  // namespace rolter
