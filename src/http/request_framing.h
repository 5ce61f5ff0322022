// Request framing rules that Beast's parser does not enforce itself (RFC 9112 §3.2, §6).
//
// Beast already rejects Transfer-Encoding together with Content-Length, invalid or conflicting
// Content-Length values, and `chunked` applied twice. It does not reject a Transfer-Encoding whose
// final coding is not `chunked`: it reads such a request as having no body, so the body would be
// parsed as a second request (request smuggling). Nor does it require exactly one Host. And it
// appends the fields of a chunked trailer to the header fields, where they would pass for headers
// (a trailer `Authorization` must never authenticate, nor reach an upstream as a header).
//
// The session checks every request head with request_framing_problem() before acting on it, and
// erases trailer fields with erase_trailer_fields() once the body is read.
//
// Thread-safety: pure functions.
#pragma once

#include "http/fields.h"

#include <cstddef>
#include <optional>
#include <string_view>

namespace rolter {

// Why the request head may not be served (answer 400 and close), or nullopt. `version` is 10 or 11.
std::optional<std::string_view> request_framing_problem(const HttpFields& fields, unsigned version);

// Erases every field after the first `head_fields` (those Beast appended from a chunked trailer).
// Returns how many it erased.
size_t erase_trailer_fields(HttpFields& fields, size_t head_fields);

// The number of fields, for erase_trailer_fields().
size_t field_count(const HttpFields& fields);

}  // namespace rolter
