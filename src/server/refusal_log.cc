#include "server/refusal_log.h"

#include "proxy/request_line.h"
#include "proxy/request_log.h"
#include "snapshot/snapshot.h"
#include "trace/request_trace.h"

namespace rolter {

void log_refusal(const RefusedRequest& r) {
  RequestLogLine line;
  line.request_id = r.trace.request_id();
  line.trace_id = r.trace.trace_id();
  line.client = r.client;
  if (r.request != nullptr) describe_request(*r.request, line);
  if (r.key != nullptr) {
    line.key = r.key->name;
    line.team = r.key->team;
  }
  line.model = r.model;
  line.target = "none";
  line.status = r.status;
  line.bytes_out = r.bytes_out;
  line.duration_s = r.trace.seconds_since_begin();
  log_request(line);
}

}  // namespace rolter
