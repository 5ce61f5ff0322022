#include "proxy/attempt_log.h"

namespace rolter {

std::string_view attempt_reason_name(AttemptReason reason) {
  switch (reason) {
    case AttemptReason::kNone:
      return "";
    case AttemptReason::kConnectRefused:
      return "connect_refused";
    case AttemptReason::kConnectTimeout:
      return "connect_timeout";
    case AttemptReason::kConnectError:
      return "connect_error";
    case AttemptReason::kSendError:
      return "send_error";
    case AttemptReason::kFirstByteTimeout:
      return "first_byte_timeout";
    case AttemptReason::kDeadline:
      return "deadline";
    case AttemptReason::kResponseError:
      return "response_error";
    case AttemptReason::kProtocolError:
      return "protocol_error";
    case AttemptReason::kStatus:
      return "status";
    case AttemptReason::kUpstreamAuth:
      return "upstream_auth";
    case AttemptReason::kContextLength:
      return "context_length";
    case AttemptReason::kContentFilter:
      return "content_filter";
    case AttemptReason::kInternal:
      return "internal";
    case AttemptReason::kKvTransfer:
      return "kv_transfer";
    case AttemptReason::kDisplaced:
      return "displaced";
  }
  return "unknown";
}

}  // namespace rolter
