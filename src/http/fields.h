// The header fields of the proxied request and response: Beast's container, with its storage (a
// block per field, the target, the reason phrase) from the thread's small-block cache
// (common/small_blocks.h), so that a request's heads cost the heap nothing once a worker is warm;
// and the string the heads it sends are written into.
// Messages and parsers over them name FieldAllocator: beast::http::request<Body, HttpFields>,
// beast::http::request_parser<Body, FieldAllocator>.
#pragma once

#include <boost/beast/http/fields.hpp>

#include <string>

#include "common/small_blocks.h"

namespace rolter {

using FieldAllocator = SmallBlockAllocator<char>;
using HttpFields = boost::beast::http::basic_fields<FieldAllocator>;
// A message head being written (the upstream request's, the client response's), from the same
// cache: a head of up to a kilobyte costs the heap nothing either.
using HeadString = std::basic_string<char, std::char_traits<char>, FieldAllocator>;

}  // namespace rolter
