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
  kInvalidJson,     // not parseable as JSON (syntax, bad escape, trailing content, empty body)
  kInvalidUtf8,     // the body is not valid UTF-8 (JSON text must be)
  kTooDeep,         // nesting beyond RequestInspector::kMaxDepth
  kNotAnObject,     // valid JSON, but the top level is not an object
  kMissingModel,    // no `model`, or an empty one
  kModelNotString,  // `model` is present but not a string
  kDuplicateModel,  // `model` appears twice: which one the upstream reads is parser-dependent
  kBadStream,       // `stream` is neither a boolean nor null
  kBadTokenIds,     // malformed x-rolter-vllm-token-ids header
  kBodyMismatch,    // model rewrite asked for with facts that do not describe this body
  kInternal,        // out of memory inside the parser
};

// Stable snake_case name of a code, for logs and metrics labels.
std::string_view inspect_error_code_name(InspectErrorCode code);

struct InspectError {
  InspectErrorCode code;
  std::string message;  // human-readable, for the `message` of the error response
};

}  // namespace rolter
