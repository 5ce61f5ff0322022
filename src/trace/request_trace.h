// RequestTrace: one request's id and trace, from its head to its answer (SPEC §17).
//
// begin() reads what the client sent: `x-request-id` (kept when valid, else a new UUIDv7,
// trace/request_id.h) and `traceparent` (trace/traceparent.h; invalid or absent = a new trace
// whose client `tracestate` is dropped). It decides whether the request is sampled
// (trace/sampler.h) and whether it is recorded: sampled, with an OTLP endpoint configured and a
// queue to put spans in. Each upstream attempt gets a span id of its own and the `traceparent`
// naming it, sampled or not, so the trace id and the decision reach the engines either way.
//
// Only a recorded request makes spans, each pushed to the export queue when it ends:
//   rolter.request  (server)   the request: method, route, status, request id, GenAI attributes
//   rolter.route    (internal) each pick: route, strategy, winner, reason, the candidates' scores
//   rolter.upstream (client)   each attempt: endpoint, target, attempt number, status, ttft, usage
// A request that is not recorded costs no allocation: the id, the trace id and the traceparent
// live in fixed buffers, and every span call returns at once.
//
//   trace.begin(deps, settings, {.request_id = req["x-request-id"], .traceparent = ...});
//   const std::string_view traceparent = trace.start_attempt();  // per attempt, before sending
//   trace.end_attempt({...});
//   trace.end();                                                 // after the answer
//
// One RequestTrace serves the requests of one connection in turn (begin() starts over).
//
// Thread-safety: one request at a time, on the worker thread serving it. The queue is shared.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "common/random.h"
#include "trace/request_id.h"
#include "trace/span_queue.h"
#include "trace/trace_ids.h"
#include "trace/traceparent.h"
#include "trace/wall_clock.h"

namespace rolter {

// What a worker lends each request's tracing.
struct TraceDeps {
  const WallClock* clock = &system_wall_clock();
  Random* random = &default_random();
  SpanQueue* queue = nullptr;  // null: nothing is exported
};

// `[tracing]` as one request reads it.
struct TracingSettings {
  bool exporting = false;  // otlp_endpoint is set
  double sample_ratio = 0.01;
};

// What the client's head says.
struct IncomingTrace {
  std::string_view request_id;        // x-request-id
  std::string_view traceparent;       // empty: absent
  bool several_traceparents = false;  // more than one field: invalid
  std::string_view tracestate;
};

// One pick, for its rolter.route span.
struct RouteSpanFacts {
  std::string_view route;
  std::string_view strategy;
  std::string_view winner;    // the candidate chosen; empty when none could be
  std::string_view reason;    // why that one (a short code)
  std::string_view decision;  // the candidates' scores as x-rolter-decision's JSON; may be empty
  unsigned attempt = 0;
};

// One attempt, for its rolter.upstream span.
struct UpstreamSpanFacts {
  std::string_view endpoint;       // the instance's identity
  std::string_view target;         // "<provider>/<model>"
  std::string_view provider_name;  // gen_ai.provider.name: "openai", "anthropic", "gcp.gemini"
  std::string_view model;          // the model asked of the upstream
  unsigned attempt = 0;
  unsigned status = 0;     // 0: no response head
  bool relayed = false;    // the answer went to the client
  std::string_view error;  // why the attempt failed; empty when it did not
  std::optional<double> ttft_s;
  std::optional<uint64_t> input_tokens;
  std::optional<uint64_t> output_tokens;
};

class RequestTrace {
 public:
  RequestTrace();
  ~RequestTrace();
  RequestTrace(const RequestTrace&) = delete;
  RequestTrace& operator=(const RequestTrace&) = delete;

  // Starts a request from its head.
  void begin(const TraceDeps& deps, const TracingSettings& settings, const IncomingTrace& in);
  // Starts a request whose head could not be read: a new id and trace, never recorded.
  void begin_unread(const TraceDeps& deps);

  std::string_view request_id() const { return request_id_.view(); }
  // The trace id as 32 lowercase hex digits.
  std::string_view trace_id() const { return {trace_id_hex_, sizeof trace_id_hex_}; }
  // Seconds since begin(), on the trace's clock.
  double seconds_since_begin() const;
  // When begin() ran: nanoseconds since the Unix epoch, on the trace's clock.
  uint64_t began_unix_nanos() const { return began_ns_; }
  bool sampled() const { return sampled_; }
  bool recording() const { return record_ != nullptr; }
  // The client's tracestate belongs to this trace (its traceparent was valid): forward it.
  bool keeps_tracestate() const { return has_parent_; }

  // A new span id for the next upstream attempt; returns the traceparent that names it, valid
  // until the next call (also upstream_traceparent()).
  std::string_view start_attempt();
  std::string_view upstream_traceparent() const {
    return {traceparent_, attempts_ > 0 ? kTraceparentLength : 0};
  }

  // What the spans say. Each is a no-op unless recording().
  void set_http(std::string_view method, std::string_view route);
  void set_status(unsigned status);
  void set_gen_ai_request(std::string_view operation, std::string_view model);
  void set_served_by(std::string_view route, std::string_view target, unsigned attempts);
  void start_route();
  void end_route(const RouteSpanFacts& facts);
  void end_attempt(const UpstreamSpanFacts& facts);
  // The request's end: its span goes to the queue. Call once per begin().
  void end();

 private:
  struct Record;
  void push(Span&& span);

  TraceDeps deps_;
  uint64_t began_ns_ = 0;  // when begin() ran, on deps_.clock
  RequestId request_id_;
  TraceId trace_id_;
  SpanId request_span_;
  char trace_id_hex_[32] = {};
  char traceparent_[kTraceparentLength] = {};
  unsigned attempts_ = 0;
  bool sampled_ = false;
  bool has_parent_ = false;
  std::unique_ptr<Record> record_;  // only while a recorded request runs
};

}  // namespace rolter
