#include "upstream/endpoint.h"

#include "config/url.h"

namespace rolter {

tl::expected<Endpoint, std::string> parse_endpoint(std::string_view text) {
  auto url = parse_url(text);
  if (!url) return tl::unexpected(std::move(url.error()));
  return Endpoint{
      .base_url = url->to_string(),
      .tls = url->tls(),
      .host = url->host,
      .port = std::to_string(url->port),
      .host_header = url->authority(),
      .base_path = url->path,
  };
}

}  // namespace rolter
