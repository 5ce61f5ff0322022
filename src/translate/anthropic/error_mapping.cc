// Upstream errors in the client's shape, both directions (SPEC §16 "Errors ... map to the client
// API's error shape and the nearest status").
//
// The status is kept when it is an error status (4xx, 5xx), except Anthropic's 529 "overloaded",
// which chat-completions clients know as 503. A status that is no error status (the upstream
// broke the protocol) becomes 502. A prompt that is too long stays recognizable either way, so
// fallback_on = "context_length" and clients' own compaction still fire: chat clients get code
// "context_length_exceeded", Anthropic clients a message starting "prompt is too long".
#include <algorithm>
#include <cctype>
#include <string>

#include "translate/anthropic/mapping.h"
#include "translate/anthropic/steps.h"

namespace rolter::anthropic {

namespace {

// An unreadable body is quoted up to this many bytes: enough to diagnose an HTML error page,
// not enough to bloat a log.
constexpr size_t kMaxQuoted = 512;

struct ErrorKind {
  const char* anthropic_type;
  const char* openai_type;
  const char* openai_code;  // nullptr: null
  unsigned status;
};

constexpr ErrorKind kKinds[] = {
    {"invalid_request_error", "invalid_request_error", nullptr, 400},
    {"authentication_error", "authentication_error", "invalid_api_key", 401},
    {"billing_error", "insufficient_quota", "insufficient_quota", 402},
    {"permission_error", "permission_error", nullptr, 403},
    {"not_found_error", "not_found_error", "not_found", 404},
    {"request_too_large", "invalid_request_error", "request_too_large", 413},
    {"rate_limit_error", "rate_limit_error", "rate_limit_exceeded", 429},
    {"api_error", "server_error", nullptr, 500},
    {"overloaded_error", "service_unavailable", "overloaded", 503},
    {"timeout_error", "timeout_error", nullptr, 504},
};

const ErrorKind* kind_of_type(std::string_view anthropic_type) {
  for (const auto& kind : kKinds) {
    if (anthropic_type == kind.anthropic_type) return &kind;
  }
  return nullptr;
}

const ErrorKind& kind_of_status(unsigned status) {
  for (const auto& kind : kKinds) {
    if (status == kind.status) return kind;
  }
  if (status == 529) return *kind_of_type("overloaded_error");
  return status >= 500 ? *kind_of_type("api_error") : *kind_of_type("invalid_request_error");
}

unsigned client_status(unsigned upstream_status) {
  if (upstream_status == 529) return 503;
  if (upstream_status < 400 || upstream_status > 599) return 502;
  return upstream_status;
}

bool contains_nocase(std::string_view text, std::string_view needle) {
  return std::search(text.begin(), text.end(), needle.begin(), needle.end(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == b;
         }) != text.end();
}

// The message of an error body of either shape, or the body itself (cut) when it has none.
std::string error_message(const Json& body, bool parsed, std::string_view raw, unsigned status) {
  if (parsed) {
    if (const Json* error = member(body, "error")) {
      if (const std::string* m = string_member(*error, "message")) return *m;
      if (error->is_string()) return error->get<std::string>();
    }
    if (const std::string* m = string_member(body, "message")) return *m;  // vLLM
    if (const std::string* m = string_member(body, "detail")) return *m;   // FastAPI
  }
  if (raw.empty()) return "the upstream answered " + std::to_string(status) + " with no body";
  return std::string(raw.substr(0, kMaxQuoted));
}

// The error's own type: error.type (both APIs), or vLLM's top-level type.
const std::string* error_type(const Json& body) {
  if (const Json* error = member(body, "error")) {
    if (const std::string* t = string_member(*error, "type")) return t;
  }
  return string_member(body, "type");
}

}  // namespace

const char* chat_error_type(std::string_view anthropic_type) {
  const ErrorKind* kind = kind_of_type(anthropic_type);
  return kind ? kind->openai_type : "server_error";
}

TranslatedError messages_error_to_chat(unsigned status, std::string_view raw) {
  Json body;
  const bool parsed = parse_json(raw, body);
  const std::string* type = parsed ? error_type(body) : nullptr;
  const ErrorKind* kind = type ? kind_of_type(*type) : nullptr;
  if (kind == nullptr) kind = &kind_of_status(client_status(status));
  const std::string message = error_message(body, parsed, raw, status);
  Json code = kind->openai_code ? Json(kind->openai_code) : Json(nullptr);
  if (contains_nocase(message, "prompt is too long")) code = "context_length_exceeded";
  Json out{
      {"error",
       {{"message", message}, {"type", kind->openai_type}, {"param", nullptr}, {"code", code}}}};
  return TranslatedError{.status = client_status(status), .body = dump_json(out)};
}

TranslatedError chat_error_to_messages(unsigned status, std::string_view raw) {
  Json body;
  const bool parsed = parse_json(raw, body);
  const unsigned out_status = client_status(status);
  std::string message = error_message(body, parsed, raw, status);
  const Json* error = parsed ? member(body, "error") : nullptr;
  const std::string* code = error ? string_member(*error, "code") : nullptr;
  if (code == nullptr && parsed) code = string_member(body, "code");
  const bool too_long = (code != nullptr && *code == "context_length_exceeded") ||
                        contains_nocase(message, "maximum context length") ||
                        contains_nocase(message, "context length is");
  if (too_long && !contains_nocase(message, "prompt is too long")) {
    message = "prompt is too long: " + message;
  }
  const char* type = kind_of_status(out_status).anthropic_type;
  Json out{{"type", "error"}, {"error", {{"type", type}, {"message", message}}}};
  return TranslatedError{.status = out_status, .body = dump_json(out)};
}

}  // namespace rolter::anthropic
