// The exporter's thread against a local OTLP receiver and against a closed port: what it posts,
// where, and what a dead collector costs (failures counted, nothing kept, nothing blocked).
#include "collect/trace_export/trace_exporter.h"

#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collect/testing/local_http_server.h"
#include "collect/testing/wait_for.h"
#include "fleet/load_tracker.h"
#include "net/asio_fwd.h"
#include "observe/metrics.h"
#include "trace/testing/proto_reader.h"

namespace rolter {
namespace {

using std::chrono::milliseconds;

TEST(OtlpTracesUrl, AddsTheDefaultPathOnlyWhenThereIsNone) {
  EXPECT_EQ(otlp_traces_url("http://c:4318"), "http://c:4318/v1/traces");
  EXPECT_EQ(otlp_traces_url("http://c:4318/"), "http://c:4318/v1/traces");
  EXPECT_EQ(otlp_traces_url("http://c:4318/v1/traces"), "http://c:4318/v1/traces");
  EXPECT_EQ(otlp_traces_url("https://c/otlp/v1/traces"), "https://c/otlp/v1/traces");
}

// Takes POSTs, keeps each (target, content type, body), answers 200.
class Receiver {
 public:
  std::string url() const { return server_.url(); }
  std::vector<SeenRequest> posts() const {
    std::lock_guard lock(mu_);
    return posts_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<SeenRequest> posts_;
  LocalHttpServer server_{[this](const SeenRequest& request) {
    std::lock_guard lock(mu_);
    posts_.push_back(request);
    return HttpAnswer{.content_type = "application/x-protobuf"};
  }};
};

// A port nothing listens on: bound, then closed.
uint16_t closed_port() {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
  return acceptor.local_endpoint().port();
}

Span a_span(uint8_t n) {
  Span span;
  span.trace_id.bytes[0] = 1;
  span.span_id.bytes[0] = n;
  span.name = "rolter.request";
  span.kind = SpanKind::kServer;
  return span;
}

size_t spans_in(const std::string& body) {
  const auto resource_spans = testing::field(body, 1);
  return testing::fields_numbered(testing::field(resource_spans.bytes, 2).bytes, 2).size();
}

class TraceExporterTest : public ::testing::Test {
 protected:
  void publish(const std::string& otlp_endpoint) {
    Config config;
    config.providers.push_back(ProviderConfig{.name = "p"});
    config.providers.back().instances.push_back({.base_url = "http://127.0.0.1:9"});
    config.routes.push_back(
        RouteConfig{.name = "m", .strategy = "round_robin", .targets = {{"p", "up", {}}}});
    config.tracing.otlp_endpoint = otlp_endpoint;
    auto snapshot =
        build_snapshot(std::move(config), tracker_, BalancerDeps{}, ++version_, nullptr);
    ASSERT_TRUE(snapshot);
    store_.publish(*snapshot);
  }
  std::string rendered() { return metrics_.render(tracker_); }

  LoadTracker tracker_;
  Metrics metrics_;
  SnapshotStore store_;
  uint64_t version_ = 0;
  const TraceExporter::Options options_{.poll = milliseconds(10),
                                        .timeout = milliseconds(1000),
                                        .batching = {.max_batch = 3, .interval = milliseconds(50)}};
};

TEST_F(TraceExporterTest, PostsBatchesAsOtlpProtobuf) {
  Receiver receiver;
  publish(receiver.url());  // no path: /v1/traces
  SpanQueue queue(16);
  for (uint8_t i = 1; i <= 5; ++i) queue.try_push(a_span(i));  // all there at the first look
  TraceExporter exporter(store_, queue, &metrics_, {.service_version = "9.9.9"}, options_);
  exporter.start();
  ASSERT_TRUE(wait_for([&] { return exporter.exported_spans() == 5; }));
  exporter.stop();
  const auto posts = receiver.posts();
  ASSERT_EQ(posts.size(), 2u);  // a full batch of three, then the other two
  size_t total = 0;
  for (const auto& post : posts) {
    EXPECT_EQ(post.target, "/v1/traces");
    EXPECT_EQ(post.content_type, "application/x-protobuf");
    total += spans_in(post.body);
  }
  EXPECT_EQ(total, 5u);
  EXPECT_NE(rendered().find("rolter_tracing_spans_exported_total 5"), std::string::npos)
      << rendered();
}

TEST_F(TraceExporterTest, StopSendsWhatWaits) {
  Receiver receiver;
  publish(receiver.url() + "/custom/traces");
  SpanQueue queue(16);
  TraceExporter exporter(store_, queue, nullptr, {},
                         {.poll = milliseconds(10),
                          .batching = {.max_batch = 512, .interval = std::chrono::hours(1)}});
  exporter.start();
  queue.try_push(a_span(1));
  std::this_thread::sleep_for(milliseconds(30));
  EXPECT_TRUE(receiver.posts().empty());
  exporter.stop();
  const auto posts = receiver.posts();
  ASSERT_EQ(posts.size(), 1u);
  EXPECT_EQ(posts[0].target, "/custom/traces");
}

TEST_F(TraceExporterTest, ADeadCollectorIsCountedAndNeverBlocksThePush) {
  publish("http://127.0.0.1:" + std::to_string(closed_port()) + "/v1/traces");
  SpanQueue queue(4);
  TraceExporter exporter(store_, queue, &metrics_, {}, options_);
  exporter.start();
  // Far more than the queue holds, as fast as possible: every push returns at once.
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < 1000; ++i) queue.try_push(a_span(1));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(1));
  ASSERT_TRUE(wait_for([&] { return exporter.failed_exports() >= 1; }));
  exporter.stop();
  const std::string text = rendered();
  EXPECT_NE(text.find("rolter_tracing_export_failures_total"), std::string::npos) << text;
  EXPECT_EQ(text.find("rolter_tracing_export_failures_total 0\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("rolter_tracing_spans_dropped_total{reason=\"queue_full\"} 0\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(exporter.exported_spans(), 0u);
}

TEST_F(TraceExporterTest, WithoutAnEndpointWaitingSpansAreDiscarded) {
  publish("");
  SpanQueue queue(8);
  TraceExporter exporter(store_, queue, &metrics_, {}, options_);
  exporter.start();
  for (uint8_t i = 1; i <= 3; ++i) queue.try_push(a_span(i));
  ASSERT_TRUE(wait_for([&] { return queue.size() == 0; }));
  exporter.stop();
  EXPECT_NE(rendered().find("rolter_tracing_spans_dropped_total{reason=\"export_failed\"} 3"),
            std::string::npos)
      << rendered();
}

}  // namespace
}  // namespace rolter
