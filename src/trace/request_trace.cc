#include "trace/request_trace.h"

#include <string>

#include "trace/sampler.h"

namespace rolter {

// What a recorded request's own span will say, gathered as the request goes.
struct RequestTrace::Record {
  Span request;  // ids, name, kind and start are set at begin()
  std::string_view method;
  std::string_view http_route;  // a literal (the endpoint's template)
  unsigned status = 0;
  std::string_view operation;  // a literal
  std::string request_model;
  std::string route;
  std::string target;
  unsigned attempts = 0;
  // From the attempt whose answer reached the client.
  std::string response_model;
  std::string provider_name;
  std::optional<uint64_t> input_tokens;
  std::optional<uint64_t> output_tokens;
  // The span in progress of each kind.
  uint64_t route_start = 0;
  uint64_t attempt_start = 0;
  SpanId attempt_span;
};

namespace {

constexpr uint64_t kNanosPerMilli = 1'000'000;
// Room for every attribute a span of ours gets (the request span has the most, 13): one
// allocation per span's list instead of one per doubling.
constexpr size_t kAttributesPerSpan = 16;

Span child_span(const TraceId& trace, const SpanId& parent, std::string_view name, SpanKind kind,
                uint64_t start, uint64_t end) {
  Span span;
  span.trace_id = trace;
  span.parent_span_id = parent;
  span.name = name;
  span.kind = kind;
  span.trace_flags = kSampledFlag;
  span.start_unix_nano = start;
  span.end_unix_nano = end;
  span.attributes.reserve(kAttributesPerSpan);
  return span;
}

void set_usage(Span& span, std::optional<uint64_t> input, std::optional<uint64_t> output) {
  if (input) span.set("gen_ai.usage.input_tokens", static_cast<int64_t>(*input));
  if (output) span.set("gen_ai.usage.output_tokens", static_cast<int64_t>(*output));
}

}  // namespace

RequestTrace::RequestTrace() = default;
RequestTrace::~RequestTrace() = default;

void RequestTrace::begin(const TraceDeps& deps, const TracingSettings& settings,
                         const IncomingTrace& in) {
  deps_ = deps;
  record_.reset();
  attempts_ = 0;
  const uint64_t now = deps.clock->unix_nanos();
  began_ns_ = now;
  request_id_.assign(in.request_id, now / kNanosPerMilli, *deps.random);
  std::optional<TraceParent> parent;
  if (!in.several_traceparents && !in.traceparent.empty()) {
    parent = parse_traceparent(in.traceparent);
  }
  has_parent_ = parent.has_value();
  trace_id_ = parent ? parent->trace_id : random_trace_id(*deps.random);
  write_hex(trace_id_, trace_id_hex_);
  // Without a collector the gateway samples nothing of its own: it passes the caller's decision on.
  sampled_ = settings.exporting ? should_sample(parent, trace_id_, settings.sample_ratio)
                                : parent && parent->sampled();
  if (!settings.exporting || deps.queue == nullptr || !sampled_) return;
  record_ = std::make_unique<Record>();
  Span& span = record_->request;
  span.trace_id = trace_id_;
  span.span_id = random_span_id(*deps.random);
  request_span_ = span.span_id;
  if (parent) {
    span.parent_span_id = parent->parent_id;
    span.remote_parent = true;
    span.trace_state = std::string(in.tracestate);
  }
  span.name = "rolter.request";
  span.kind = SpanKind::kServer;
  span.trace_flags = kSampledFlag;
  span.start_unix_nano = now;
  span.attributes.reserve(kAttributesPerSpan);
}

double RequestTrace::seconds_since_begin() const {
  const uint64_t now = deps_.clock->unix_nanos();
  return now > began_ns_ ? static_cast<double>(now - began_ns_) / 1e9 : 0.0;
}

void RequestTrace::begin_unread(const TraceDeps& deps) {
  begin(deps, TracingSettings{.exporting = false}, IncomingTrace{});
}

std::string_view RequestTrace::start_attempt() {
  ++attempts_;
  const SpanId span = random_span_id(*deps_.random);
  format_traceparent(trace_id_, span, sampled_, traceparent_);
  if (record_) {
    record_->attempt_span = span;
    record_->attempt_start = deps_.clock->unix_nanos();
  }
  return upstream_traceparent();
}

void RequestTrace::set_http(std::string_view method, std::string_view route) {
  if (!record_) return;
  record_->method = method;
  record_->http_route = route;
}

void RequestTrace::set_status(unsigned status) {
  if (record_) record_->status = status;
}

void RequestTrace::set_gen_ai_request(std::string_view operation, std::string_view model) {
  if (!record_) return;
  record_->operation = operation;
  record_->request_model = std::string(model);
}

void RequestTrace::set_served_by(std::string_view route, std::string_view target,
                                 unsigned attempts) {
  if (!record_) return;
  record_->route = std::string(route);
  record_->target = std::string(target);
  record_->attempts = attempts;
}

void RequestTrace::start_route() {
  if (record_) record_->route_start = deps_.clock->unix_nanos();
}

void RequestTrace::end_route(const RouteSpanFacts& facts) {
  if (!record_) return;
  Span span = child_span(trace_id_, request_span_, "rolter.route", SpanKind::kInternal,
                         record_->route_start, deps_.clock->unix_nanos());
  span.span_id = random_span_id(*deps_.random);
  span.set("rolter.route", facts.route);
  span.set("rolter.strategy", facts.strategy);
  span.set("rolter.attempt", static_cast<int64_t>(facts.attempt));
  if (!facts.winner.empty()) span.set("rolter.winner", facts.winner);
  if (!facts.reason.empty()) span.set("rolter.reason", facts.reason);
  if (!facts.decision.empty()) span.set("rolter.decision", facts.decision);
  if (facts.winner.empty()) span.status = SpanStatus::kError;
  push(std::move(span));
}

void RequestTrace::end_attempt(const UpstreamSpanFacts& facts) {
  if (!record_) return;
  Record& r = *record_;
  Span span = child_span(trace_id_, request_span_, "rolter.upstream", SpanKind::kClient,
                         r.attempt_start, deps_.clock->unix_nanos());
  span.span_id = r.attempt_span;
  span.set("rolter.endpoint", facts.endpoint);
  span.set("rolter.target", facts.target);
  span.set("rolter.attempt", static_cast<int64_t>(facts.attempt));
  if (facts.status != 0) span.set("http.response.status_code", static_cast<int64_t>(facts.status));
  if (facts.ttft_s) span.set("rolter.ttft_s", *facts.ttft_s);
  if (!r.operation.empty()) span.set("gen_ai.operation.name", r.operation);
  span.set("gen_ai.provider.name", facts.provider_name);
  span.set("gen_ai.request.model", facts.model);
  if (facts.relayed) span.set("gen_ai.response.model", facts.model);
  set_usage(span, facts.input_tokens, facts.output_tokens);
  if (!facts.error.empty() || facts.status >= 400 || facts.status == 0) {
    span.status = SpanStatus::kError;
    span.status_message =
        facts.error.empty() ? "status " + std::to_string(facts.status) : std::string(facts.error);
  }
  if (facts.relayed) {
    r.response_model = std::string(facts.model);
    r.provider_name = std::string(facts.provider_name);
    r.input_tokens = facts.input_tokens;
    r.output_tokens = facts.output_tokens;
  }
  push(std::move(span));
}

void RequestTrace::end() {
  if (!record_) return;
  Record& r = *record_;
  Span& span = r.request;
  span.end_unix_nano = deps_.clock->unix_nanos();
  span.set("rolter.request_id", request_id());
  if (!r.method.empty()) span.set("http.request.method", r.method);
  if (!r.http_route.empty()) span.set("http.route", r.http_route);
  if (r.status != 0) span.set("http.response.status_code", static_cast<int64_t>(r.status));
  if (!r.operation.empty()) {
    span.set("gen_ai.operation.name", r.operation);
    span.set("gen_ai.request.model", r.request_model);
  }
  if (!r.route.empty()) span.set("rolter.route", r.route);
  if (!r.target.empty()) span.set("rolter.target", r.target);
  if (r.attempts > 0) span.set("rolter.attempts", static_cast<int64_t>(r.attempts));
  if (!r.response_model.empty()) {
    span.set("gen_ai.response.model", r.response_model);
    span.set("gen_ai.provider.name", r.provider_name);
    set_usage(span, r.input_tokens, r.output_tokens);
  }
  // A server span is an error when the gateway failed the request (5xx), not when the client did.
  if (r.status >= 500) span.status = SpanStatus::kError;
  push(std::move(span));
  record_.reset();
}

void RequestTrace::push(Span&& span) { deps_.queue->try_push(std::move(span)); }

}  // namespace rolter
