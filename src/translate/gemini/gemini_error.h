// Internal: Gemini errors in OpenAI's shape {"error": {"message", "type", "param", "code"}}.
//
// The status comes from Gemini's canonical status name when it gives one (it is more precise
// than the HTTP status a proxy in between may have rewritten), else from the HTTP status:
//   INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE 400 · UNAUTHENTICATED 401 ·
//   PERMISSION_DENIED 403 · NOT_FOUND 404 · ALREADY_EXISTS, ABORTED 409 ·
//   RESOURCE_EXHAUSTED 429 · CANCELLED 499 · INTERNAL, UNKNOWN, DATA_LOSS 500 ·
//   UNIMPLEMENTED 501 · UNAVAILABLE 503 · DEADLINE_EXCEEDED 504.
// type follows the gateway's own errors (proxy/error_response.cc). code is
// "context_length_exceeded" when Gemini says the input token count exceeds the maximum (so
// fallback_on = context_length works across kinds), "rate_limit_exceeded" for 429, else Gemini's
// status name in lower case, or null.
//
// Thread-safety: free functions.
#pragma once

#include <string>
#include <string_view>

#include "translate/gemini/gemini_json.h"

namespace rolter::gemini {

// A non-2xx Gemini answer (any body, JSON or not) as the client's error.
TranslatedError chat_error(unsigned upstream_status, std::string_view upstream_body);

// The same for a parsed body: {"error": {...}}, [{"error": {...}}] (how some Gemini front ends
// wrap it) or anything else. `raw` is shown as the message when the body says nothing usable.
TranslatedError chat_error_from(unsigned upstream_status, const Json* body, std::string_view raw);

// An OpenAI error body.
std::string openai_error_body(unsigned status, std::string_view message, std::string_view code);

}  // namespace rolter::gemini
