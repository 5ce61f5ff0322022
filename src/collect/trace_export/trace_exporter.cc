#include "collect/trace_export/trace_exporter.h"

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <optional>
#include <string>

#include "collect/loop/background_loop.h"
#include "collect/loop/snapshot_changes.h"
#include "collect/trace_export/tracing_metrics.h"
#include "upstream/endpoint.h"
#include "upstream/one_shot.h"
#include "upstream/upstream_connection.h"

namespace rolter {
namespace http = beast::http;

namespace {

constexpr std::string_view kTracesPath = "/v1/traces";
// A collector's answer is a small ExportTraceServiceResponse; more is not read.
constexpr size_t kMaxAnswerBytes = 64 * 1024;

}  // namespace

std::string otlp_traces_url(std::string_view otlp_endpoint) {
  auto endpoint = parse_endpoint(otlp_endpoint);
  std::string url(otlp_endpoint);
  if (endpoint && endpoint->base_path.empty()) {
    while (!url.empty() && url.back() == '/') url.pop_back();
    url.append(kTracesPath);
  }
  return url;
}

struct TraceExporter::Impl {
  Impl(const SnapshotStore& s, SpanQueue& q, Metrics* m, TraceResource r, Options o)
      : store(s),
        options(o),
        batcher(q, std::move(r), default_clock(), o.batching) {
    if (m != nullptr) metrics = TracingMetrics::registered(*m);
  }

  const SnapshotStore& store;
  const Options options;
  SpanBatcher batcher;
  TracingMetrics metrics;
  ClientTls tls;  // the process's, made at the first https:// connection
  std::optional<Endpoint> endpoint;  // null: no collector configured
  bool failing = false;
  bool started = false;       // the owner's thread
  BackgroundLoop background;  // last: its pending work goes before what it uses

  void follow(SnapshotChanges& changes);
  Task<void> send_due(bool flush);
  Task<bool> post(std::string body);
  Task<void> run();
};

void TraceExporter::Impl::follow(SnapshotChanges& changes) {
  auto snapshot = changes.next();
  if (!snapshot) return;
  const std::string configured =
      *snapshot ? (*snapshot)->config().tracing.otlp_endpoint : std::string();
  endpoint.reset();
  if (configured.empty()) return;
  auto parsed = parse_endpoint(otlp_traces_url(configured));
  if (!parsed) {
    spdlog::error("tracing: otlp_endpoint '{}' does not parse ({}); spans are not exported",
                  configured, parsed.error());
    return;
  }
  endpoint = std::move(*parsed);
}

Task<bool> TraceExporter::Impl::post(std::string body) {
  OneShotRequest request = one_shot_request(http::verb::post, *endpoint, "", "rolter-tracing");
  request.set(http::field::content_type, "application/x-protobuf");
  request.body() = std::move(body);
  request.prepare_payload();
  const OneShotResult answer = co_await one_shot(
      *endpoint, 0, tls, std::move(request),
      OneShotLimits{.timeout = options.timeout, .max_body_bytes = kMaxAnswerBytes});
  const bool ok = answer && answer->result_int() >= 200 && answer->result_int() < 300;
  if (ok) {
    if (std::exchange(failing, false)) {
      spdlog::info("tracing: {} accepts spans again", endpoint->base_url);
    }
  } else if (!std::exchange(failing, true)) {
    spdlog::warn("tracing: exporting to {} failed ({}); spans are dropped until it answers",
                 endpoint->base_url, answer ? status_text(*answer) : answer.error().message);
  }
  co_return ok;
}

Task<void> TraceExporter::Impl::send_due(bool flush) {
  if (!endpoint) {
    batcher.discard();
    co_return;
  }
  while (auto batch = batcher.next(flush)) {
    const size_t spans = batch->spans;
    const bool ok = co_await post(std::move(batch->body));
    batcher.sent(SpanBatcher::Batch{.spans = spans}, ok);
    metrics.sync(batcher);
  }
}

Task<void> TraceExporter::Impl::run() {
  SnapshotChanges changes(store);
  asio::steady_timer timer(background.io());
  for (;;) {
    follow(changes);
    co_await send_due(/*flush=*/false);
    metrics.sync(batcher);
    timer.expires_after(options.poll);
    auto [ec] = co_await timer.async_wait(kNoThrow);
    if (ec) co_return;
  }
}

TraceExporter::TraceExporter(const SnapshotStore& store, SpanQueue& queue, Metrics* metrics,
                             TraceResource resource, Options options)
    : impl_(std::make_unique<Impl>(store, queue, metrics, std::move(resource), options)) {}

TraceExporter::TraceExporter(const SnapshotStore& store, SpanQueue& queue, Metrics* metrics,
                             TraceResource resource)
    : TraceExporter(store, queue, metrics, std::move(resource), Options{}) {}

TraceExporter::~TraceExporter() {
  if (impl_->started) stop();
}

void TraceExporter::start() {
  if (impl_->started) return;
  impl_->started = true;
  impl_->background.start([impl = impl_.get()] { return impl->run(); });
}

void TraceExporter::stop() {
  if (!impl_->background.running()) return;
  impl_->background.stop();
  // The last spans, on a loop of this thread's own: the post's own deadline bounds it.
  asio::io_context io;
  asio::co_spawn(io, impl_->send_due(/*flush=*/true), [](std::exception_ptr) {});
  io.run();
  impl_->metrics.sync(impl_->batcher);
}

uint64_t TraceExporter::exported_spans() const { return impl_->batcher.exported_spans(); }
uint64_t TraceExporter::failed_exports() const { return impl_->batcher.failed_exports(); }

}  // namespace rolter
