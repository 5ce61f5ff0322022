// Step 1 of a disaggregated request (SPEC §18): one call to a prefill worker, and what came back.
//
// The call is a POST of the step-1 body (proxy/kv_transfer.h) to the candidate's
// {base_url}{client's path}, on a fresh connection that closes after the answer (upstream/
// one_shot.h), within `timeout`. The answer is read whole: it is one token and the transfer
// parameters. A 200 whose body carries a kv_transfer_params object is a success; anything else is
// a failure that says why, for the access log and the attempt loop's next move.
//
// Thread-safety: runs on the caller's executor; the candidate, the request and `tls` must outlive
// the call, and `tls` must not be used by another thread meanwhile.
#pragma once

#include <boost/asio/ssl/context.hpp>

#include <chrono>
#include <string>
#include <string_view>

#include "net/asio_fwd.h"
#include "snapshot/snapshot.h"
#include "upstream/client_tls.h"

namespace rolter {

// The largest step-1 answer read: a million-token prompt has 62,500 blocks of 16, whose ids take
// well under a megabyte of JSON.
inline constexpr size_t kMaxPrefillAnswerBytes = 4u << 20;

struct PrefillCall {
  std::string params;  // the answer's kv_transfer_params, as sent; empty on failure
  unsigned status = 0;  // the answer's status; 0 when none came
  bool timed_out = false;
  bool refused = false;
  std::string error;  // why it failed; empty on success

  bool ok() const { return error.empty(); }
};

struct PrefillCallParams {
  const Candidate* candidate = nullptr;
  std::string_view target;      // the client's request target, e.g. "/v1/chat/completions"
  std::string body;             // the step-1 body
  std::string_view request_id;   // sent as x-request-id when not empty
  std::string_view traceparent;  // this attempt's, sent when not empty (SPEC §17)
  std::chrono::milliseconds timeout{1000};
};

Task<PrefillCall> call_prefill(PrefillCallParams params, ClientTls tls);

}  // namespace rolter
