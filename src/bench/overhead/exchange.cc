#include "bench/overhead/exchange.h"

#include <boost/asio/this_coro.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>

namespace rolter::bench::overhead {
namespace {

namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

// Body bytes go through this buffer and are dropped; it only bounds one read's size.
constexpr size_t kBodyChunk = 16 * 1024;
constexpr std::string_view kData = "data:";

}  // namespace

Task<error_code> connect(beast::tcp_stream& stream, const std::string& host, uint16_t port,
                         Clock::duration timeout) {
  error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  if (ec) co_return ec;
  stream.expires_after(timeout);
  auto [cerr] = co_await stream.async_connect(tcp::endpoint(address, port), kNoThrow);
  if (!cerr) stream.socket().set_option(tcp::no_delay(true), ec);
  co_return cerr;
}

Task<ExchangeResult> exchange(beast::tcp_stream& stream, beast::flat_buffer& buffer,
                              std::string_view request, Clock::duration timeout) {
  ExchangeResult r;
  stream.expires_after(timeout);
  auto [werr, wn] = co_await asio::async_write(stream, asio::buffer(request), kNoThrow);
  if (werr) {
    r.error = werr;
    co_return r;
  }
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(boost::none);
  auto [herr, hn] = co_await http::async_read_header(stream, buffer, parser, kNoThrow);
  if (herr) {
    r.error = herr;
    co_return r;
  }
  r.status = parser.get().result_int();
  r.keep_alive = parser.get().keep_alive();
  char chunk[kBodyChunk];
  // The tail of the previous read, so a `data:` split across two reads is still seen.
  std::string carry;
  while (!parser.is_done()) {
    parser.get().body().data = chunk;
    parser.get().body().size = sizeof chunk;
    // read_some, not read: read would wait for the buffer to fill, hiding when events arrive.
    auto [rerr, rn] = co_await http::async_read_some(stream, buffer, parser, kNoThrow);
    if (rerr == http::error::need_buffer) rerr = {};
    if (rerr) {
      r.error = rerr;
      co_return r;
    }
    const size_t got = sizeof chunk - parser.get().body().size;
    if (got > 0 && !r.saw_data) {
      carry.append(chunk, got);
      if (carry.find(kData) != std::string::npos) {
        r.saw_data = true;
        r.first_data = Clock::now();
      } else if (carry.size() > kData.size()) {
        carry.erase(0, carry.size() - kData.size());
      }
    }
  }
  r.done = Clock::now();
  co_return r;
}

}  // namespace rolter::bench::overhead
