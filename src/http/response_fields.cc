#include "http/response_fields.h"

#include <string>

#include "http/hop_by_hop.h"
#include "http/tokens.h"
#include "http/upstream_head.h"

namespace rolter {
namespace http = boost::beast::http;

void copy_response_fields(const http::fields& upstream, http::fields& client, bool via) {
  const auto options = ConnectionOptions::of(upstream);
  std::string via_value;
  for (const auto& field : upstream) {
    const std::string_view name = field.name_string();
    if (options.is_hop_by_hop(name) || iequals_ascii(name, "content-length")) continue;
    if (via && iequals_ascii(name, "via")) {
      via_value.append(field.value()).append(", ");
      continue;
    }
    client.insert(name, field.value());
  }
  if (via) {
    via_value.append(via_entry(11));
    client.insert(http::field::via, via_value);
  }
}

}  // namespace rolter
