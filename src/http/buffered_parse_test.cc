#include "http/buffered_parse.h"

#include <gtest/gtest.h>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <array>
#include <string_view>

namespace rolter {
namespace {

namespace http = beast::http;

void fill(beast::flat_buffer& buffer, std::string_view text) {
  const size_t n = asio::buffer_copy(buffer.prepare(text.size()), asio::buffer(text));
  buffer.commit(n);
}

constexpr std::string_view kRequest =
    "POST /v1/chat/completions HTTP/1.1\r\nHost: g\r\nContent-Length: 5\r\n\r\nhello";

TEST(BufferedParse, HeaderFirstThenTheBodyThatCameWithIt) {
  http::request_parser<http::string_body> parser;
  beast::flat_buffer buffer;
  fill(buffer, kRequest);
  EXPECT_FALSE(parse_buffered(parser, buffer, ParseUntil::kHeader));
  EXPECT_TRUE(parser.is_header_done());
  EXPECT_FALSE(parser.is_done());
  EXPECT_EQ(buffer.size(), 5u) << "the body waits for its own step";
  EXPECT_FALSE(parse_buffered(parser, buffer, ParseUntil::kMessage));
  EXPECT_TRUE(parser.is_done());
  EXPECT_EQ(parser.get().body(), "hello");
  EXPECT_EQ(buffer.size(), 0u);
}

TEST(BufferedParse, IncompleteInputWantsMoreAndLeavesItForTheRead) {
  http::request_parser<http::string_body> parser;
  beast::flat_buffer buffer;
  fill(buffer, kRequest.substr(0, 20));
  EXPECT_FALSE(parse_buffered(parser, buffer, ParseUntil::kHeader));
  EXPECT_FALSE(parser.is_header_done());
  EXPECT_EQ(buffer.size(), 20u) << "a partial head stays in the buffer";
  // Half the body: taken, and the parser waits for the rest.
  fill(buffer, kRequest.substr(20, kRequest.size() - 20 - 3));
  EXPECT_FALSE(parse_buffered(parser, buffer, ParseUntil::kMessage));
  EXPECT_FALSE(parser.is_done());
  fill(buffer, kRequest.substr(kRequest.size() - 3));
  EXPECT_FALSE(parse_buffered(parser, buffer, ParseUntil::kMessage));
  EXPECT_TRUE(parser.is_done());
  EXPECT_EQ(parser.get().body(), "hello");
}

TEST(BufferedParse, ErrorsAreTheParsers) {
  http::request_parser<http::string_body> parser;
  parser.body_limit(3);
  beast::flat_buffer buffer;
  fill(buffer, kRequest);
  EXPECT_EQ(parse_buffered(parser, buffer, ParseUntil::kMessage), http::error::body_limit);

  http::request_parser<http::string_body> garbage;
  beast::flat_buffer bad;
  fill(bad, "NOT HTTP AT ALL\r\n\r\n");
  EXPECT_TRUE(parse_buffered(garbage, bad, ParseUntil::kHeader));
}

TEST(BufferedParse, AFullBodyBufferSaysNeedBuffer) {
  http::response_parser<http::buffer_body> parser;
  beast::flat_buffer buffer;
  fill(buffer, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789");
  EXPECT_FALSE(parse_buffered(parser, buffer, ParseUntil::kHeader));
  std::array<char, 4> piece{};
  parser.get().body().data = piece.data();
  parser.get().body().size = piece.size();
  EXPECT_EQ(parse_buffered(parser, buffer, ParseUntil::kMessage), http::error::need_buffer);
  EXPECT_EQ(std::string_view(piece.data(), piece.size()), "0123");
  EXPECT_FALSE(parser.is_done());
}

}  // namespace
}  // namespace rolter
