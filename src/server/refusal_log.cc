#include "server/refusal_log.h"

#include "proxy/request_log.h"
#include "snapshot/snapshot.h"
#include "trace/request_trace.h"

namespace rolter {

void log_refusal(const RefusedRequest& r) {
  RequestLogLine line;
  line.request_id = r.trace.request_id();
  line.trace_id = r.trace.trace_id();
  line.client = r.client;
  if (r.request != nullptr) {
    const std::string_view target = r.request->target();
    line.method = r.request->method_string();
    line.path = target.substr(0, target.find('?'));  // a query may carry what is not ours to log
    line.bytes_in = r.request->body().size();
  }
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
