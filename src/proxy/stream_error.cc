#include "proxy/stream_error.h"

#include "common/json_escape.h"
#include "proxy/error_response.h"

namespace rolter {

std::string stream_error_event(ApiKind kind, std::string_view message,
                               std::optional<uint64_t> last_sequence_number,
                               std::string_view request_id) {
  std::string event;
  switch (kind) {
    case ApiKind::kResponses:
      event = R"(event: error)"
              "\n"
              R"(data: {"type":"error","code":"upstream_error","message":)";
      append_json_string(event, message);
      event.append(R"(,"param":null,"sequence_number":)");
      event.append(std::to_string(last_sequence_number ? *last_sequence_number + 1 : 0));
      if (!request_id.empty()) {
        event.append(R"(,"request_id":)");
        append_json_string(event, request_id);
      }
      event.append("}");
      break;
    case ApiKind::kMessages:
      event = "event: error\ndata: ";
      event.append(error_body(
          ErrorStyle::kAnthropic,
          ApiError{.status = 502, .type = "api_error", .message = std::string(message)},
          request_id));
      break;
    case ApiKind::kChatCompletions:
    case ApiKind::kCompletions:
    case ApiKind::kEmbeddings:
      event = "data: ";
      event.append(error_body(ErrorStyle::kOpenAi, ApiError{.status = 502,
                                                            .type = "api_error",
                                                            .message = std::string(message),
                                                            .code = "upstream_error"},
                                request_id));
      break;
  }
  event.append("\n\n");
  return event;
}

}  // namespace rolter
