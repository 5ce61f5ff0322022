// Error bodies in the shape the client's API expects (SPEC §2): OpenAI
// `{"error":{"message","type","param","code"}}`, or Anthropic
// `{"type":"error","error":{"type","message"}}` on /v1/messages. Given the request's id, the
// error object carries it as `request_id` (SPEC §17), in either shape.
//
// Messages never carry upstream API keys or internals: callers pass text written for clients.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace rolter {

enum class ErrorStyle { kOpenAi, kAnthropic };

struct ApiError {
  unsigned status = 500;
  std::string_view type;  // e.g. "invalid_request_error"
  std::string message;
  std::string_view code;   // optional, e.g. "model_not_found"
  std::string_view param;  // optional, e.g. "model"
};

std::string error_body(ErrorStyle style, const ApiError& error, std::string_view request_id = {});

// The default error type for an HTTP status, for OpenAI-style bodies.
std::string_view error_type_for_status(unsigned status);

}  // namespace rolter
