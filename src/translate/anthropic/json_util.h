// Exception-free access to nlohmann::json for the Anthropic translators: every read checks the
// type first, parsing never throws and refuses absurd nesting, serializing never throws on
// invalid UTF-8. Internal to translate/anthropic/; keep it out of public headers.
//
// Thread-safety: free functions over caller-owned values.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "translate/translator.h"

namespace rolter::anthropic {

using Json = nlohmann::json;

// Deeper documents are refused before nlohmann sees them: dump() and copies recurse, so a
// hostile 100k-deep array would overflow the stack. Real requests nest a tool schema a few dozen
// levels at most.
inline constexpr size_t kMaxDepth = 128;

// Parses `text` into `out`; false when it is not JSON or nests deeper than kMaxDepth.
bool parse_json(std::string_view text, Json& out);

// Compact JSON; invalid UTF-8 in strings becomes U+FFFD instead of throwing.
std::string dump_json(const Json& value);

// The member `key` of `object`; nullptr when `object` is not an object, or the member is missing
// or null (the OpenAI and Anthropic APIs treat an explicit null as absent).
const Json* member(const Json& object, const char* key);

// The member's string; nullptr when missing or not a string.
const std::string* string_member(const Json& object, const char* key);

// A non-negative integer (an integral float too); nullopt for anything else, never UB on a
// huge or negative number.
std::optional<uint64_t> to_u64(const Json& value);
uint64_t u64_member(const Json& object, const char* key);  // 0 when missing or not a count

// A client-body error: 400 naming `param`.
TranslateError bad_field(std::string param, std::string message);
// An upstream answer that makes no sense: 502.
TranslateError bad_upstream(std::string message);

// "messages[3].content[1]": the path of an element, for error messages.
std::string at(std::string_view base, size_t index);

}  // namespace rolter::anthropic
