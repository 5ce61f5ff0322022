// Parsing of the x-rolter-vllm-token-ids header (SPEC §2): the request's prompt as engine token
// ids, so KV-event routing can score cache residency without tokenising.
//
// Grammar: one or more unsigned decimal integers, each < 2^32, separated by commas; spaces and
// tabs are allowed around each number. Anything else (an empty value, a sign, a trailing comma,
// an overflowing number) is an error whose message names the byte where parsing stopped.
//
//   std::vector<uint32_t> ids;
//   if (auto ok = parse_token_ids_header("1, 2,3", ids); !ok) return bad_request(ok.error());
//
// Thread-safety: pure function; `out` belongs to the caller.
#pragma once

#include <cstdint>
#include <string_view>
#include <tl/expected.hpp>
#include <vector>

#include "inspect/inspect_error.h"

namespace rolter {

inline constexpr std::string_view kTokenIdsHeader = "x-rolter-vllm-token-ids";

// Replaces the contents of `out` with the ids in `value` (capacity is kept, so a reused vector does
// not allocate). On error `out` is left empty and the error code is bad_token_ids.
tl::expected<void, InspectError> parse_token_ids_header(std::string_view value,
                                                        std::vector<uint32_t>& out);

}  // namespace rolter
