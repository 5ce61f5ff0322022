#include "translate/gemini/gemini_error.h"

#include <cctype>

namespace rolter::gemini {
namespace {

struct StatusName {
  std::string_view name;
  unsigned http;
};

// google.rpc.Code names and the HTTP status Google's own API gateway gives each.
constexpr StatusName kStatuses[] = {
    {"INVALID_ARGUMENT", 400},   {"FAILED_PRECONDITION", 400},
    {"OUT_OF_RANGE", 400},       {"UNAUTHENTICATED", 401},
    {"PERMISSION_DENIED", 403},  {"NOT_FOUND", 404},
    {"ALREADY_EXISTS", 409},     {"ABORTED", 409},
    {"RESOURCE_EXHAUSTED", 429}, {"CANCELLED", 499},
    {"INTERNAL", 500},           {"UNKNOWN", 500},
    {"DATA_LOSS", 500},          {"UNIMPLEMENTED", 501},
    {"UNAVAILABLE", 503},        {"DEADLINE_EXCEEDED", 504},
};

// A body shown as the message is cut here: an HTML error page says nothing past its start.
constexpr size_t kMaxRawMessage = 512;

std::string_view error_type(unsigned status) {
  switch (status) {
    case 400:
    case 404:
    case 405:
    case 409:
    case 413:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 429:
      return "rate_limit_error";
    case 503:
      return "service_unavailable";
    case 504:
      return "timeout_error";
    default:
      return "api_error";
  }
}

bool says_context_too_long(std::string message) {
  for (char& c : message) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return message.find("input token count") != std::string::npos &&
         message.find("exceeds the maximum") != std::string::npos;
}

const Json* error_object(const Json* body) {
  if (body == nullptr) return nullptr;
  if (body->is_array() && !body->empty()) return object_member((*body)[0], "error");
  return object_member(*body, "error");
}

}  // namespace

std::string openai_error_body(unsigned status, std::string_view message, std::string_view code) {
  Json error = {{"message", message},
                {"type", error_type(status)},
                {"param", nullptr},
                {"code", code.empty() ? Json() : Json(code)}};
  return dump_json(Json{{"error", std::move(error)}});
}

TranslatedError chat_error_from(unsigned upstream_status, const Json* body, std::string_view raw) {
  unsigned status = upstream_status >= 400 && upstream_status <= 599 ? upstream_status : 502;
  const Json* error = error_object(body);
  const std::string* name = error ? string_member(*error, "status") : nullptr;
  const std::string* text = error ? string_member(*error, "message") : nullptr;
  if (const auto number = error ? count_member(*error, "code") : std::nullopt;
      number && *number >= 400 && *number <= 599) {
    status = static_cast<unsigned>(*number);
  }
  std::string code;
  if (name != nullptr) {
    for (const auto& known : kStatuses) {
      if (known.name == *name) status = known.http;
    }
    for (char c : *name)
      code.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  std::string message;
  if (text != nullptr && !text->empty())
    message = *text;
  else if (!raw.empty())
    message = std::string(raw.substr(0, kMaxRawMessage));
  else
    message = "Gemini answered " + std::to_string(upstream_status);
  if (status == 429) code = "rate_limit_exceeded";
  if (status == 400 && says_context_too_long(message)) code = "context_length_exceeded";
  return TranslatedError{status, openai_error_body(status, message, code)};
}

TranslatedError chat_error(unsigned upstream_status, std::string_view upstream_body) {
  const auto body = parse_json(upstream_body);
  return chat_error_from(upstream_status, body ? &*body : nullptr, upstream_body);
}

}  // namespace rolter::gemini
