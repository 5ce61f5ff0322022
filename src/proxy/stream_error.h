// The event that ends a relayed stream whose upstream failed mid-way (SPEC §8: never a silent
// truncation), in the shape each API's clients parse:
// - chat and completions: `data: {"error":{...}}`, which the OpenAI SDKs raise as an APIError;
// - Responses: `event: error` with `{"type":"error","code","message","param","sequence_number"}`,
//   numbered after the last event relayed;
// - Anthropic Messages: `event: error` with `{"type":"error","error":{"type","message"}}`.
// No `data: [DONE]` follows: the stream did not complete. Given the request's id, the error carries
// it as `request_id` (in the error object; in the Responses event itself).
//
// Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "inspect/request_facts.h"

namespace rolter {

std::string stream_error_event(ApiKind kind, std::string_view message,
                               std::optional<uint64_t> last_sequence_number,
                               std::string_view request_id = {});

}  // namespace rolter
