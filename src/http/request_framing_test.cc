#include "http/request_framing.h"

#include <gtest/gtest.h>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <string>

namespace rolter {
namespace {
namespace http = boost::beast::http;

enum class Verdict { kServe, kFramingError, kParseError };

struct Parsed {
  Verdict verdict = Verdict::kServe;
  std::string body;
  HttpFields fields;
  size_t trailers_erased = 0;
};

// Parses one whole request as the session does: head, framing check, body, trailer erasure.
Parsed parse(const std::string& raw) {
  Parsed out;
  http::request_parser<http::string_body, FieldAllocator> parser;
  boost::system::error_code ec;
  // Not eager: like async_read_header, the first put stops after the head.
  size_t used = parser.put(boost::asio::buffer(raw), ec);
  if (ec || !parser.is_header_done()) {
    out.verdict = Verdict::kParseError;
    return out;
  }
  if (request_framing_problem(parser.get(), parser.get().version())) {
    out.verdict = Verdict::kFramingError;
    return out;
  }
  const size_t head_fields = field_count(parser.get());
  parser.eager(true);
  while (!parser.is_done() && used < raw.size()) {
    used += parser.put(boost::asio::buffer(raw.data() + used, raw.size() - used), ec);
    if (ec) {
      out.verdict = Verdict::kParseError;
      return out;
    }
  }
  if (!parser.is_done()) {
    out.verdict = Verdict::kParseError;
    return out;
  }
  out.trailers_erased = erase_trailer_fields(parser.get(), head_fields);
  out.body = parser.get().body();
  out.fields = parser.get();
  return out;
}

struct Case {
  const char* name;
  std::string raw;
  Verdict verdict;
};

TEST(RequestFraming, Table) {
  const std::string post = "POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\n";
  const std::string smuggled = "5\r\nhello\r\n0\r\n\r\nGET /admin HTTP/1.1\r\nHost: x\r\n\r\n";
  const Case cases[] = {
      {"content-length", post + "Content-Length: 2\r\n\r\n{}", Verdict::kServe},
      {"chunked", post + "Transfer-Encoding: chunked\r\n\r\n" + smuggled, Verdict::kServe},
      {"chunked, any case", post + "Transfer-Encoding: ChUnKeD\r\n\r\n" + smuggled,
       Verdict::kServe},
      {"gzip alone", post + "Transfer-Encoding: gzip\r\n\r\n" + smuggled, Verdict::kFramingError},
      {"chunked then identity", post + "Transfer-Encoding: chunked, identity\r\n\r\n" + smuggled,
       Verdict::kFramingError},
      {"xchunked", post + "Transfer-Encoding: xchunked\r\n\r\n" + smuggled, Verdict::kFramingError},
      {"gzip then chunked", post + "Transfer-Encoding: gzip, chunked\r\n\r\n" + smuggled,
       Verdict::kFramingError},
      {"two fields, gzip then chunked",
       post + "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n" + smuggled,
       Verdict::kFramingError},
      {"chunked twice in one field",
       post + "Transfer-Encoding: chunked, chunked\r\n\r\n" + smuggled, Verdict::kFramingError},
      {"empty coding list", post + "Transfer-Encoding: \r\n\r\n", Verdict::kFramingError},
      {"http/1.0 with chunked", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n" + smuggled,
       Verdict::kFramingError},
      {"chunked with content-length",
       post + "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n" + smuggled,
       Verdict::kParseError},
      {"content-length with chunked",
       post + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n" + smuggled,
       Verdict::kParseError},
      {"two content-lengths", post + "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
       Verdict::kParseError},
      {"no host in 1.1", "GET /v1/models HTTP/1.1\r\n\r\n", Verdict::kFramingError},
      {"two hosts", "GET /v1/models HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
       Verdict::kFramingError},
      {"no host in 1.0", "GET /v1/models HTTP/1.0\r\n\r\n", Verdict::kServe},
      {"two hosts in 1.0", "GET /v1/models HTTP/1.0\r\nHost: a\r\nhost: b\r\n\r\n",
       Verdict::kFramingError},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(parse(c.raw).verdict, c.verdict) << c.name;
  }
}

TEST(RequestFraming, TrailersNeverBecomeHeaders) {
  const std::string raw =
      "POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: chunked\r\n"
      "X-Head: 1\r\n\r\n2\r\n{}\r\n0\r\nAuthorization: Bearer stolen\r\nX-Trailer: 1\r\n\r\n";
  const Parsed parsed = parse(raw);
  ASSERT_EQ(parsed.verdict, Verdict::kServe);
  EXPECT_EQ(parsed.body, "{}");
  EXPECT_EQ(parsed.trailers_erased, 2u);
  EXPECT_EQ(parsed.fields.count(http::field::authorization), 0u);
  EXPECT_EQ(parsed.fields.count("x-trailer"), 0u);
  EXPECT_EQ(parsed.fields["x-head"], "1");
  EXPECT_EQ(parsed.fields["host"], "gw");
}

}  // namespace
}  // namespace rolter
