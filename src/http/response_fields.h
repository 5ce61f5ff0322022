// The upstream response fields the proxy relays to the client.
//
// Dropped: hop-by-hop fields and those the response's Connection names (http/hop_by_hop.h), and
// Content-Length, because the relay frames the body itself. Via gets this hop appended
// (RFC 9110 §7.6.3) when `via` is set.
//
// Thread-safety: pure function.
#pragma once

#include <boost/beast/http/fields.hpp>

namespace rolter {

void copy_response_fields(const boost::beast::http::fields& upstream,
                          boost::beast::http::fields& client, bool via);

}  // namespace rolter
