// The usage chunk of an OpenAI stream, which rolter asks the upstream for (SPEC §15) and removes
// again when the client did not ask for it.
//
// Upstream, a chat or completions stream gets `"stream_options":{"include_usage":true}` appended
// to its body when the client did not set it (usage_request_suffix()). The upstream then ends the
// stream with one extra event whose `choices` is an empty array and whose `usage` is an object;
// drop_usage_events() removes exactly those events from relayed bytes, leaving every other byte
// as it was.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string_view>

namespace rolter {

// Appended before a JSON body's closing brace: the last occurrence of a key wins in the JSON
// readers upstreams use, so a client's own stream_options without include_usage is overridden.
inline constexpr std::string_view kUsageRequestSuffix =
    R"(,"stream_options":{"include_usage":true})";

// Whether one SSE event (its lines, with or without the blank line that ends it) is a usage-only
// chunk: a data line whose JSON has a key `choices` holding `[]` and a key `usage` holding an
// object. Keys are found only outside strings (a quote that ends a key is never escaped).
bool is_usage_only_event(std::string_view event);

// Removes every complete usage-only event from data[0, length) in place and returns the new
// length. Only events ended by their blank line are looked at; a trailing incomplete one stays.
size_t drop_usage_events(char* data, size_t length);

}  // namespace rolter
