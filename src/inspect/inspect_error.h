// InspectError: why a request body or routing header could not be read.
//
// Every error here is the client's fault and maps to HTTP 400 `invalid_request_error`, except
// `internal` (500: the gateway could not get memory to parse). `message` is safe to send back to
// the client: it never quotes body content beyond a byte offset.
//
// Thread-safety: a plain value type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace rolter {

enum class InspectErrorCode : uint8_t {
  invalid_json,      // not parseable as JSON (syntax, bad escape, trailing content, empty body)
  invalid_utf8,      // the body is not valid UTF-8 (JSON text must be)
  too_deep,          // nesting beyond RequestInspector::kMaxDepth
  not_an_object,     // valid JSON, but the top level is not an object
  missing_model,     // no `model`, or an empty one
  model_not_string,  // `model` is present but not a string
  duplicate_model,   // `model` appears twice: which one the upstream reads is parser-dependent
  bad_stream,        // `stream` is neither a boolean nor null
  bad_token_ids,     // malformed x-rolter-vllm-token-ids header
  body_mismatch,     // model rewrite asked for with facts that do not describe this body
  internal,          // out of memory inside the parser
};

// Stable snake_case name of a code, for logs and metrics labels.
std::string_view inspect_error_code_name(InspectErrorCode code);

struct InspectError {
  InspectErrorCode code;
  std::string message;  // human-readable, for the `message` of the error response
};

}  // namespace rolter
