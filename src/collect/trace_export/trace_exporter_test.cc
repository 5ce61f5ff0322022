// The exporter's thread against a local OTLP receiver and against a closed port: what it posts,
// where, and what a dead collector costs (failures counted, nothing kept, nothing blocked).
#include "collect/trace_export/trace_exporter.h"

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fleet/load_tracker.h"
#include "net/asio_fwd.h"
#include "observe/metrics.h"
#include "trace/testing/proto_reader.h"

namespace rolter {
namespace {

using std::chrono::milliseconds;
namespace http = beast::http;

TEST(OtlpTracesUrl, AddsTheDefaultPathOnlyWhenThereIsNone) {
  EXPECT_EQ(otlp_traces_url("http://c:4318"), "http://c:4318/v1/traces");
  EXPECT_EQ(otlp_traces_url("http://c:4318/"), "http://c:4318/v1/traces");
  EXPECT_EQ(otlp_traces_url("http://c:4318/v1/traces"), "http://c:4318/v1/traces");
  EXPECT_EQ(otlp_traces_url("https://c/otlp/v1/traces"), "https://c/otlp/v1/traces");
}

// Takes POSTs on 127.0.0.1:<ephemeral>, keeps each (target, content type, body), answers 200.
class Receiver {
 public:
  struct Post {
    std::string target;
    std::string content_type;
    std::string body;
  };
  Receiver() : acceptor_(io_, {asio::ip::make_address("127.0.0.1"), 0}) {
    asio::co_spawn(io_, accept_loop(), asio::detached);
    thread_ = std::thread([this] { io_.run(); });
  }
  ~Receiver() {
    io_.stop();
    thread_.join();
  }
  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port());
  }
  std::vector<Post> posts() const {
    std::lock_guard lock(mu_);
    return posts_;
  }

 private:
  Task<void> accept_loop() {
    for (;;) {
      auto [ec, socket] = co_await acceptor_.async_accept(kNoThrow);
      if (ec) co_return;
      asio::co_spawn(io_, serve(beast::tcp_stream(std::move(socket))), asio::detached);
    }
  }
  Task<void> serve(beast::tcp_stream stream) {
    beast::flat_buffer buffer;
    http::request<http::string_body> request;
    auto [read_ec, read] = co_await http::async_read(stream, buffer, request, kNoThrow);
    if (read_ec) co_return;
    {
      std::lock_guard lock(mu_);
      posts_.push_back({std::string(request.target()),
                        std::string(request[http::field::content_type]), request.body()});
    }
    http::response<http::string_body> response{http::status::ok, 11};
    response.set(http::field::content_type, "application/x-protobuf");
    response.keep_alive(false);
    response.prepare_payload();
    co_await http::async_write(stream, response, kNoThrow);
  }

  asio::io_context io_{1};
  asio::ip::tcp::acceptor acceptor_;
  std::thread thread_;
  mutable std::mutex mu_;
  std::vector<Post> posts_;
};

bool wait_for(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return true;
}

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
