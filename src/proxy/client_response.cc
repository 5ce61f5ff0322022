#include "proxy/client_response.h"

#include <boost/asio/write.hpp>
#include <boost/beast/core/buffer_traits.hpp>
#include <boost/beast/core/buffers_suffix.hpp>

#include <array>
#include <cstdio>
#include <span>

#include "net/write_now.h"
#include "proxy/exchange.h"

namespace rolter {
namespace http = beast::http;

ClientResponse::ClientResponse(const ResponseParser& parser, const AttemptParams& p,
                               uint64_t& body_bytes)
    : body_bytes_(body_bytes) {
  const auto& in = parser.get();
  const unsigned status = in.result_int();
  ClientHeadSpec spec{.status = status, .reason = in.reason()};
  const bool bodiless = status == 204 || status == 304;
  if (auto length = parser.content_length(); length && !bodiless) {
    spec.framing = BodyFraming::kLength;
    spec.content_length = *length;
  } else if (!parser.is_done()) {
    spec.framing = BodyFraming::kChunked;  // build() makes it kClose for an HTTP/1.0 client
  } else {
    spec.framing = bodiless ? BodyFraming::kNone : BodyFraming::kLength;
  }
  build(in, spec, p);
}

ClientResponse::ClientResponse(const ResponseParser& parser, const AttemptParams& p,
                               unsigned status, std::string_view content_type,
                               std::optional<size_t> length, uint64_t& body_bytes)
    : body_bytes_(body_bytes) {
  HttpFields fields = parser.get().base();
  fields.set(http::field::content_type, content_type);
  ClientHeadSpec spec{.status = status};
  spec.framing = length ? BodyFraming::kLength : BodyFraming::kChunked;
  spec.content_length = length.value_or(0);
  build(fields, spec, p);
}

void ClientResponse::build(const HttpFields& fields, ClientHeadSpec spec,
                           const AttemptParams& p) {
  const auto& request = *p.request;
  spec.version = request.client_version == 10 ? 10u : 11u;
  spec.via = request.snapshot->config().server.forwarded_headers;
  spec.request_id = request_id_of(request);
  spec.target = p.candidate->label;
  spec.route = request.route.pool->name;
  spec.fallbacks = request.fallbacks;
  spec.attempts = p.attempt_number;
  spec.decision = p.decision;
  spec.extra_fields = request.extra_fields;
  spec.keep_alive = request.client_keep_alive;
  // An HTTP/1.0 client cannot read chunked: the end of its body is the end of the connection.
  if (spec.framing == BodyFraming::kChunked && request.client_version == 10) {
    spec.framing = BodyFraming::kClose;
    spec.keep_alive = false;
  }
  chunked_ = spec.framing == BodyFraming::kChunked;
  keep_alive_ = spec.keep_alive;
  head_.reserve(512);
  append_client_head(fields, spec, head_);
}

Task<bool> ClientResponse::write(TimedStream& client, std::string_view data, bool last) {
  std::array<asio::const_buffer, 5> pieces;
  size_t n = 0;
  if (!head_sent_) pieces[n++] = asio::buffer(head_);
  std::array<char, 20> size_line;
  if (!data.empty()) {
    if (chunked_) {
      const int length = std::snprintf(size_line.data(), size_line.size(), "%zx\r\n", data.size());
      pieces[n++] = asio::buffer(size_line.data(), static_cast<size_t>(length));
    }
    pieces[n++] = asio::buffer(data);
    if (chunked_) pieces[n++] = asio::buffer("\r\n", 2);
  }
  if (last && chunked_) pieces[n++] = asio::buffer("0\r\n\r\n", 5);
  if (n == 0) co_return true;
  // Usually the socket takes it all at once; a slow client gets the rest asynchronously (its
  // stream's timeout bounds the wait).
  const std::span<const asio::const_buffer> all(pieces.data(), n);
  error_code ec;
  beast::buffers_suffix<std::span<const asio::const_buffer>> rest(all);
  rest.consume(write_now(client.socket(), all, ec));
  if (!ec && beast::buffer_bytes(rest) > 0) {
    auto [write_ec, written] = co_await asio::async_write(client, rest, kNoThrow);
    ec = write_ec;
  }
  if (ec) co_return false;
  head_sent_ = true;
  body_bytes_ += data.size();
  co_return true;
}

Task<bool> ClientResponse::write_head(TimedStream& client) {
  if (head_sent_) co_return true;
  co_return co_await write(client, {}, false);
}

bool clean_after(const ResponseParser& parser) {
  const unsigned status = parser.get().result_int();
  return parser.is_done() && parser.keep_alive() && status != 204 && status != 304;
}

}  // namespace rolter
