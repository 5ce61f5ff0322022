#include "proxy/error_response.h"

#include "common/json_escape.h"

namespace rolter {

std::string_view error_type_for_status(unsigned status) {
  switch (status) {
    case 400: case 404: case 405: case 413: return "invalid_request_error";
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 429: return "rate_limit_error";
    case 503: return "service_unavailable";
    case 504: return "timeout_error";
    default: return "api_error";
  }
}

namespace {

void append_request_id(std::string& out, std::string_view request_id) {
  if (request_id.empty()) return;
  out.append(R"(,"request_id":)");
  append_json_string(out, request_id);
}

}  // namespace

std::string error_body(ErrorStyle style, const ApiError& error, std::string_view request_id) {
  const std::string_view type = error.type.empty() ? error_type_for_status(error.status)
                                                   : error.type;
  std::string out;
  out.reserve(96 + error.message.size() + request_id.size());
  if (style == ErrorStyle::kAnthropic) {
    // Anthropic names a missing model "not_found_error" and a bad request by its status alone.
    std::string_view anthropic_type = type;
    if (error.status == 404) anthropic_type = "not_found_error";
    if (error.status == 413) anthropic_type = "request_too_large";
    if (error.status == 503) anthropic_type = "overloaded_error";
    out.append(R"({"type":"error","error":{"type":)");
    append_json_string(out, anthropic_type);
    out.append(R"(,"message":)");
    append_json_string(out, error.message);
    append_request_id(out, request_id);
    out.append("}}");
    return out;
  }
  out.append(R"({"error":{"message":)");
  append_json_string(out, error.message);
  out.append(R"(,"type":)");
  append_json_string(out, type);
  out.append(R"(,"param":)");
  if (error.param.empty()) out.append("null"); else append_json_string(out, error.param);
  out.append(R"(,"code":)");
  if (error.code.empty()) out.append("null"); else append_json_string(out, error.code);
  append_request_id(out, request_id);
  out.append("}}");
  return out;
}

}  // namespace rolter
