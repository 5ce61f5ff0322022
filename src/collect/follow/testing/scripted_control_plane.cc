#include "collect/follow/testing/scripted_control_plane.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "net/asio_fwd.h"

namespace rolter {
namespace {

namespace http = beast::http;
using tcp = asio::ip::tcp;

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

std::string RecordedRequest::header(const std::string& name) const {
  const auto it = headers.find(lower(name));
  return it == headers.end() ? "<absent>" : it->second;
}

struct ScriptedControlPlane::Impl {
  Impl() : acceptor(io, {asio::ip::make_address("127.0.0.1"), 0}) {}

  Task<void> accept_loop() {
    for (;;) {
      auto [ec, socket] = co_await acceptor.async_accept(kNoThrow);
      if (ec) co_return;
      asio::co_spawn(io, serve(beast::tcp_stream(std::move(socket))), asio::detached);
    }
  }

  ScriptedAnswer next(http::request<http::string_body>& request) {
    RecordedRequest recorded{.method = std::string(request.method_string()),
                             .target = std::string(request.target()),
                             .headers = {},
                             .body = request.body(),
                             .at = std::chrono::steady_clock::now()};
    for (const auto& field : request) {
      recorded.headers[lower(field.name_string())] = std::string(field.value());
    }
    std::lock_guard lock(mu);
    recorded_requests.push_back(std::move(recorded));
    arrived.notify_all();
    if (script.empty()) return fallback;
    ScriptedAnswer answer = std::move(script.front());
    script.pop_front();
    return answer;
  }

  Task<void> serve(beast::tcp_stream stream) {
    beast::flat_buffer buffer;
    http::request<http::string_body> request;
    auto [read_ec, read] = co_await http::async_read(stream, buffer, request, kNoThrow);
    if (read_ec) co_return;
    const ScriptedAnswer answer = next(request);
    if (answer.hold.count() > 0) {
      asio::steady_timer timer(io, answer.hold);
      co_await timer.async_wait(kNoThrow);
    }
    if (answer.close) {
      error_code ignored;
      stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
      co_return;
    }
    http::response<http::string_body> response{static_cast<http::status>(answer.status), 11};
    for (const auto& [name, value] : answer.headers) response.set(name, value);
    response.body() = answer.body;
    response.keep_alive(false);
    response.prepare_payload();
    auto [write_ec, written] = co_await http::async_write(stream, response, kNoThrow);
    if (!write_ec) {
      std::lock_guard lock(mu);
      ++answers_sent;
    }
  }

  asio::io_context io{1};
  tcp::acceptor acceptor;
  std::thread thread;
  mutable std::mutex mu;
  mutable std::condition_variable arrived;
  std::deque<ScriptedAnswer> script;
  ScriptedAnswer fallback{.status = 304, .hold = std::chrono::seconds(60)};
  std::vector<RecordedRequest> recorded_requests;
  size_t answers_sent = 0;
};

ScriptedControlPlane::ScriptedControlPlane() : impl_(std::make_unique<Impl>()) {
  asio::co_spawn(impl_->io, impl_->accept_loop(), asio::detached);
  impl_->thread = std::thread([impl = impl_.get()] { impl->io.run(); });
}

ScriptedControlPlane::~ScriptedControlPlane() {
  impl_->io.stop();
  impl_->thread.join();
}

std::string ScriptedControlPlane::url() const {
  return "http://127.0.0.1:" + std::to_string(impl_->acceptor.local_endpoint().port());
}

void ScriptedControlPlane::script(std::vector<ScriptedAnswer> answers) {
  std::lock_guard lock(impl_->mu);
  for (auto& answer : answers) impl_->script.push_back(std::move(answer));
}

void ScriptedControlPlane::set_fallback(ScriptedAnswer answer) {
  std::lock_guard lock(impl_->mu);
  impl_->fallback = std::move(answer);
}

std::vector<RecordedRequest> ScriptedControlPlane::requests() const {
  std::lock_guard lock(impl_->mu);
  return impl_->recorded_requests;
}

bool ScriptedControlPlane::wait_requests(size_t n, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(impl_->mu);
  return impl_->arrived.wait_for(lock, timeout,
                                 [&] { return impl_->recorded_requests.size() >= n; });
}

size_t ScriptedControlPlane::answered() const {
  std::lock_guard lock(impl_->mu);
  return impl_->answers_sent;
}

std::string refused_control_plane_url() {
  // Port 1 on loopback: nothing listens there, so every connect is refused at once.
  return "http://127.0.0.1:1";
}

}  // namespace rolter
