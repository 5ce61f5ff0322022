// Fuzzes what the proxy does with a client's request head and body, together: Beast's parser, the
// framing rules, trailer erasure, and the upstream head built from what is left. Invariants:
// nothing crashes; a request that passes carries no hop-by-hop field and no client credential
// upstream, and every line of the upstream head is a well-formed field line.
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <cstdlib>
#include <string>
#include <string_view>

#include "http/hop_by_hop.h"
#include "http/request_framing.h"
#include "http/client_head.h"
#include "http/tokens.h"
#include "http/upstream_head.h"

namespace http = boost::beast::http;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

void check_upstream_head(const std::string& head) {
  check(head.ends_with("\r\n\r\n"));
  size_t credentials = 0;
  size_t pos = head.find("\r\n") + 2;  // past the request line
  while (pos < head.size() - 2) {
    const size_t end = head.find("\r\n", pos);
    const std::string_view line(head.data() + pos, end - pos);
    const size_t colon = line.find(':');
    check(colon != std::string_view::npos && colon > 0);
    const std::string_view name = line.substr(0, colon);
    check(line.find('\r') == std::string_view::npos && line.find('\n') == std::string_view::npos);
    check(!rolter::is_fixed_hop_by_hop(name));
    // The only credential upstream is the provider's, once.
    check(!rolter::iequals_ascii(name, "x-api-key"));
    if (rolter::iequals_ascii(name, "authorization")) {
      ++credentials;
      check(line == "Authorization: Bearer provider-key");
    }
    pos = end + 2;
  }
  check(credentials == 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  http::request_parser<http::string_body, rolter::FieldAllocator> parser;
  parser.header_limit(64 * 1024);
  parser.body_limit(1 << 20);
  boost::system::error_code ec;
  size_t used = parser.put(boost::asio::buffer(input.data(), input.size()), ec);
  if (ec || !parser.is_header_done()) return 0;
  auto& request = parser.get();
  if (rolter::request_framing_problem(request, request.version())) return 0;
  const size_t head_fields = rolter::field_count(request);
  parser.eager(true);
  while (!parser.is_done() && used < input.size() && !ec) {
    used += parser.put(boost::asio::buffer(input.data() + used, input.size() - used), ec);
  }
  if (parser.is_done()) rolter::erase_trailer_fields(request, head_fields);
  check(!parser.is_done() || rolter::field_count(request) <= head_fields);

  // Credentials the client sent must never be what reaches the upstream.
  request.set(http::field::authorization, "Bearer client-secret");
  request.set("x-api-key", "client-secret");
  rolter::UpstreamHeadSpec spec;
  spec.method = request.method_string();
  spec.target = request.target();
  spec.host_header = "engine";
  spec.content_length = request.body().size();
  spec.api_key = "provider-key";
  spec.client_ip = "127.0.0.1";
  spec.client_version = request.version();
  rolter::HeadString head;
  rolter::append_upstream_head(spec, request, head);
  // The request line may carry whatever target Beast accepted; check the field lines.
  check_upstream_head(std::string(head));

  // The same fields relayed as a response head: no hop-by-hop field survives.
  rolter::HeadString relayed;
  rolter::append_client_head(request, {.target = "t", .content_length = 0}, relayed);
  std::string_view lines(relayed);
  lines.remove_prefix(lines.find("\r\n") + 2);  // the status line
  while (!lines.empty() && !lines.starts_with("\r\n")) {
    const size_t end = lines.find("\r\n");
    const std::string_view line = lines.substr(0, end);
    check(!rolter::is_fixed_hop_by_hop(line.substr(0, line.find(':'))));
    lines.remove_prefix(end + 2);
  }
  return 0;
}
