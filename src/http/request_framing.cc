#include "http/request_framing.h"

#include <iterator>

#include "http/tokens.h"

namespace rolter {
namespace http = boost::beast::http;

namespace {

// RFC 9112 §6.1: with Transfer-Encoding, the final coding must be `chunked`, else the length of a
// request body cannot be known. The only request coding this server reads is `chunked` alone:
// `gzip, chunked` would need decoding before the body could be inspected or forwarded.
std::optional<std::string_view> transfer_encoding_problem(const HttpFields& fields,
                                                          unsigned version) {
  size_t codings = 0;
  size_t chunked_at = 0;  // 1-based position of the last `chunked`; 0 = absent
  bool present = false;
  for (const auto& field : fields) {
    if (field.name() != http::field::transfer_encoding) continue;
    present = true;
    for_each_token(field.value(), [&](std::string_view coding) {
      ++codings;
      if (iequals_ascii(coding, "chunked")) chunked_at = codings;
    });
  }
  if (!present) return std::nullopt;
  if (version < 11) return "Transfer-Encoding is not allowed in an HTTP/1.0 request";
  if (chunked_at != codings || codings == 0) {
    return "Transfer-Encoding must end with chunked (the body's length is unknown otherwise)";
  }
  if (codings > 1) return "Transfer-Encoding codings other than a single chunked are not supported";
  return std::nullopt;
}

std::optional<std::string_view> host_problem(const HttpFields& fields, unsigned version) {
  size_t hosts = 0;
  for (const auto& field : fields) {
    if (field.name() == http::field::host) ++hosts;
  }
  if (hosts > 1) return "more than one Host header";
  if (hosts == 0 && version >= 11) return "missing Host header (required in HTTP/1.1)";
  return std::nullopt;
}

}  // namespace

std::optional<std::string_view> request_framing_problem(const HttpFields& fields,
                                                        unsigned version) {
  if (auto problem = transfer_encoding_problem(fields, version)) return problem;
  return host_problem(fields, version);
}

size_t field_count(const HttpFields& fields) {
  return static_cast<size_t>(std::distance(fields.begin(), fields.end()));
}

size_t erase_trailer_fields(HttpFields& fields, size_t head_fields) {
  auto it = fields.begin();
  for (size_t i = 0; i < head_fields && it != fields.end(); ++i) ++it;
  size_t erased = 0;
  while (it != fields.end()) {
    it = fields.erase(it);
    ++erased;
  }
  return erased;
}

}  // namespace rolter
