#include "proxy/request_line.h"

namespace rolter {

RequestLogLine request_log_line(const ForwardRequest& request) {
  RequestLogLine line;
  line.request_id = request_id_of(request);
  line.trace_id = trace_id_of(request);
  line.client = request.client_ip;
  if (request.request != nullptr) describe_request(*request.request, line);
  if (request.facts != nullptr) {
    line.model = request.facts->model;
    line.stream = request.facts->stream;
  }
  if (request.key != nullptr) {
    line.key = request.key->name;
    line.team = request.key->team;
  }
  line.route = request.route.pool->name;
  line.fallbacks = request.fallbacks;
  line.bytes_in = request.body.size();
  return line;
}

void describe_request(const ClientRequest& request, RequestLogLine& line) {
  const std::string_view target = request.target();
  line.method = request.method_string();
  line.path = target.substr(0, target.find('?'));
  line.bytes_in = request.body().size();
}

}  // namespace rolter
