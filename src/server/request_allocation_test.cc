// Counts the heap allocations of one proxied request in steady state, end to end: a real Server
// with one worker on loopback, a keep-alive client and a canned upstream, both plain POSIX sockets
// on the test's own threads that never allocate. malloc and its kin are replaced in this binary
// only; they count every allocation of the process while counting is on, so what is counted is the
// gateway's work: accept is long done, the upstream connection is pooled, and nothing else runs.
//
// The limits are the measured values (docs/benchmarks.md publishes them): a change that adds an
// allocation per request fails here, and one that removes some should lower the limit.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "config/loader.h"
#include "fleet/load_tracker.h"
#include "observe/metrics.h"
#include "observe/sharded_series.h"
#include "proxy/request_log.h"
#include "server/server.h"
#include "server/worker_tenancy.h"
#include "snapshot/snapshot_store.h"
#include "trace/span_queue.h"
#include "usage/usage_ledger.h"

// Counting happens at malloc's level, not operator new's: Asio allocates its coroutine frames and
// handlers with aligned_alloc() and malloc() directly (recycling what it can), and those count
// as much as anything else. glibc's own entry points do the work.
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void __libc_free(void*);
}

namespace {

std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};

void count() {
  if (g_counting.load(std::memory_order_relaxed)) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace

extern "C" {
void* malloc(size_t size) {
  count();
  return __libc_malloc(size);
}
void* calloc(size_t n, size_t size) {
  count();
  return __libc_calloc(n, size);
}
void* realloc(void* p, size_t size) {
  count();
  return __libc_realloc(p, size);
}
void* aligned_alloc(size_t alignment, size_t size) {
  count();
  return __libc_memalign(alignment, size);
}
void* memalign(size_t alignment, size_t size) {
  count();
  return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, size_t alignment, size_t size) {
  count();
  void* p = __libc_memalign(alignment, size);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}
void free(void* p) { __libc_free(p); }
}

namespace rolter {
namespace {

// Measured allocations per request (see the banner): the request body's buffer. The heads and
// their fields come from the worker's small-block cache (http/fields.h). Streaming adds nothing.
constexpr double kMaxAllocationsPerRequest = 1;
constexpr double kMaxAllocationsPerStream = 1;

constexpr int kWarmup = 200;
constexpr int kMeasured = 1000;

constexpr std::string_view kCompletion =
    R"({"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,)"
    R"("message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}],)"
    R"("usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}})";

// 16 content events, [DONE], as one chunked body.
std::string sse_body() {
  std::string events;
  for (int i = 0; i < 16; ++i) {
    events += R"(data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":)"
              R"({"content":"tok"},"finish_reason":null}]})"
              "\n\n";
  }
  events += "data: [DONE]\n\n";
  char size[16];
  std::snprintf(size, sizeof size, "%zx", events.size());
  return std::string(size) + "\r\n" + events + "\r\n0\r\n\r\n";
}

int listen_loopback(uint16_t& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 16) != 0) {
    ::close(fd);
    return -1;
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  port = ntohs(addr.sin_port);
  return fd;
}

// True when `text` contains `needle` (lower case), ignoring the case of `text`. No allocation.
bool contains_nocase(std::string_view text, std::string_view needle) {
  for (size_t i = 0; i + needle.size() <= text.size(); ++i) {
    size_t k = 0;
    while (k < needle.size() &&
           std::tolower(static_cast<unsigned char>(text[i + k])) == needle[k]) {
      ++k;
    }
    if (k == needle.size()) return true;
  }
  return false;
}

// The value of the Content-Length field in `head`, or 0. No allocation.
size_t content_length(std::string_view head) {
  constexpr std::string_view kName = "content-length:";
  for (size_t i = 0; i + kName.size() <= head.size(); ++i) {
    if (contains_nocase(head.substr(i, kName.size()), kName)) {
      return std::strtoul(head.data() + i + kName.size(), nullptr, 10);
    }
  }
  return 0;
}

// The length of a complete HTTP message at the front of `data` (head + Content-Length body, or
// head + chunked body up to its last chunk), or 0 while incomplete. No allocation.
size_t message_length(std::string_view data) {
  const size_t head_end = data.find("\r\n\r\n");
  if (head_end == std::string_view::npos) return 0;
  const size_t body_start = head_end + 4;
  const std::string_view head = data.substr(0, head_end);
  if (contains_nocase(head, "transfer-encoding: chunked")) {
    const size_t end = data.find("\r\n0\r\n\r\n", body_start - 2);
    return end == std::string_view::npos ? 0 : end + 7;
  }
  const size_t length = content_length(head);
  return data.size() >= body_start + length ? body_start + length : 0;
}

// A canned upstream on its own thread: it answers every request on every connection with the
// same bytes. poll() over fixed arrays: nothing allocates once it runs.
class CannedUpstream {
 public:
  explicit CannedUpstream(std::string response) : response_(std::move(response)) {
    listener_ = listen_loopback(port_);
    thread_ = std::thread([this] { run(); });
  }
  ~CannedUpstream() {
    stop_ = true;
    thread_.join();
    ::close(listener_);
  }
  uint16_t port() const { return port_; }

 private:
  static constexpr int kMaxConnections = 16;
  struct Connection {
    int fd = -1;
    std::array<char, 16384> in{};
    size_t held = 0;
  };

  void run() {
    std::array<Connection, kMaxConnections> connections;
    while (!stop_) {
      std::array<pollfd, kMaxConnections + 1> fds{};
      fds[0] = {listener_, POLLIN, 0};
      for (int i = 0; i < kMaxConnections; ++i) fds[i + 1] = {connections[i].fd, POLLIN, 0};
      if (::poll(fds.data(), fds.size(), 50) <= 0) continue;
      if (fds[0].revents & POLLIN) {
        const int fd = ::accept(listener_, nullptr, nullptr);
        for (auto& c : connections) {
          if (c.fd < 0 && fd >= 0) {
            c.fd = fd;
            c.held = 0;
            break;
          }
        }
      }
      for (int i = 0; i < kMaxConnections; ++i) {
        if (!(fds[i + 1].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        auto& c = connections[i];
        const ssize_t n = ::recv(c.fd, c.in.data() + c.held, c.in.size() - c.held, 0);
        if (n <= 0) {
          ::close(c.fd);
          c.fd = -1;
          continue;
        }
        c.held += static_cast<size_t>(n);
        while (const size_t length = message_length({c.in.data(), c.held})) {
          (void)!::send(c.fd, response_.data(), response_.size(), MSG_NOSIGNAL);
          std::memmove(c.in.data(), c.in.data() + length, c.held - length);
          c.held -= length;
        }
      }
    }
    for (auto& c : connections) {
      if (c.fd >= 0) ::close(c.fd);
    }
  }

  std::string response_;
  int listener_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// One keep-alive client connection with a receive deadline: blocking send and receive into a
// fixed buffer, so the measured loop allocates nothing on the client side.
class Client {
 public:
  explicit Client(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    const int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    timeval deadline{.tv_sec = 5, .tv_usec = 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &deadline, sizeof deadline);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~Client() { ::close(fd_); }
  bool connected() const { return connected_; }

  // Sends `request` and reads one whole response. Returns its status, or 0 on failure.
  int exchange(std::string_view request) {
    if (::send(fd_, request.data(), request.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(request.size())) {
      return 0;
    }
    size_t held = 0;
    for (;;) {
      const ssize_t n = ::recv(fd_, buffer_.data() + held, buffer_.size() - held, 0);
      if (n <= 0) return 0;
      held += static_cast<size_t>(n);
      if (const size_t length = message_length({buffer_.data(), held})) {
        last_ = std::string_view(buffer_.data(), length);
        return held == length ? std::atoi(buffer_.data() + 9) : 0;
      }
    }
  }
  std::string_view last() const { return last_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
  std::array<char, 65536> buffer_{};
  std::string_view last_;
};

class RequestAllocationTest : public ::testing::Test {
 protected:
  // `extra_toml` goes before the provider (a table such as [tracing]); `provider_fields` into
  // it.
  void start(const std::string& upstream_response, const std::string& extra_toml = "",
             const std::string& provider_fields = "") {
    upstream_ = std::make_unique<CannedUpstream>(upstream_response);
    const std::string toml = extra_toml +
                             "[[providers]]\nname = \"up\"\nbase_url = \"http://127.0.0.1:" +
                             std::to_string(upstream_->port()) + "\"\n" + provider_fields +
                             "[[routes]]\nname = \"m\"\nstrategy = \"round_robin\"\n"
                             "targets = [{ provider = \"up\", model = \"upstream-m\" }]\n";
    auto loaded = load_config_text(toml, "test.toml");
    ASSERT_TRUE(loaded) << loaded.error().front().to_string();
    auto built = build_snapshot(std::move(loaded->config), tracker_, BalancerDeps{}, 1, &metrics_);
    ASSERT_TRUE(built) << built.error().front();
    store_.publish(std::move(*built));
    server_ = std::make_unique<Server>(store_, 1);
    server_->state().metrics = &metrics_;
    server_->state().tracker = &tracker_;
    server_->state().spans = &spans_;
    server_->state().tenancy = tenancy_;
    auto port = server_->listen("127.0.0.1", 0);
    ASSERT_TRUE(port) << port.error();
    server_->start();
    client_ = std::make_unique<Client>(*port);
    ASSERT_TRUE(client_->connected());
  }

  // Allocations per request over kMeasured requests, after kWarmup.
  double allocations_per_request(std::string_view request) {
    for (int i = 0; i < kWarmup; ++i) {
      if (client_->exchange(request) != 200) {
        ADD_FAILURE() << "warm-up request " << i << " failed: " << client_->last();
        return -1;
      }
    }
    int failures = 0;
    g_allocations = 0;
    g_counting = true;
    for (int i = 0; i < kMeasured; ++i) failures += client_->exchange(request) != 200;
    g_counting = false;
    EXPECT_EQ(failures, 0);
    return static_cast<double>(g_allocations.load()) / kMeasured;
  }

  void TearDown() override {
    client_.reset();
    if (server_) server_->stop();
    server_.reset();
    upstream_.reset();
  }

  SnapshotStore store_;
  LoadTracker tracker_;
  Metrics metrics_;
  SpanQueue spans_{64};  // a recorded request's spans would go here
  // Set before start() to record usage, as `rolter serve` does when usage has somewhere to go.
  // The ledger outlives the server (TearDown stops it first), whatever a test's end.
  UsageLedger ledger_;
  TenancyServices recording_{.ledger = &ledger_};
  const TenancyServices* tenancy_ = nullptr;
  std::unique_ptr<CannedUpstream> upstream_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<Client> client_;
};

// `fields`: more header lines, each ending in \r\n.
std::string chat_request(bool stream, const std::string& fields = "") {
  const std::string body = std::string(R"({"model":"m",)") + (stream ? R"("stream":true,)" : "") +
                           R"("messages":[{"role":"user","content":"hi"}]})";
  return "POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nContent-Type: "
         "application/json\r\n" + fields + "Content-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

TEST_F(RequestAllocationTest, NonStreamingRequest) {
  set_access_log(false);  // the log line's own allocations are the logger's, not the relay's
  start("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
        std::to_string(kCompletion.size()) + "\r\n\r\n" + std::string(kCompletion));
  const std::string request = chat_request(false);
  const double per_request = allocations_per_request(request);
  ASSERT_GE(per_request, 0);
  EXPECT_NE(client_->last().find("x-rolter-target: up"), std::string_view::npos) << client_->last();
  EXPECT_NE(client_->last().find(R"("content":"hello")"), std::string_view::npos);
  std::printf("allocations per proxied request (non-streaming): %.2f\n", per_request);
  RecordProperty("allocations_per_request", std::to_string(per_request));
  EXPECT_LE(per_request, kMaxAllocationsPerRequest);
  set_access_log(true);
}

TEST_F(RequestAllocationTest, StreamingRequest) {
  set_access_log(false);
  start("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" +
        sse_body());
  const std::string request = chat_request(true);
  const double per_request = allocations_per_request(request);
  ASSERT_GE(per_request, 0);
  EXPECT_NE(client_->last().find("data: [DONE]"), std::string_view::npos) << client_->last();
  std::printf("allocations per proxied request (streaming, 16 events): %.2f\n", per_request);
  RecordProperty("allocations_per_stream", std::to_string(per_request));
  EXPECT_LE(per_request, kMaxAllocationsPerStream);
  set_access_log(true);
}

// SPEC §17: with tracing on, a request that is not sampled (its caller's traceparent says so)
// costs what one without tracing costs: its id, trace id and traceparents live in fixed buffers,
// and its two extra request fields in the small-block cache, as every field.
TEST_F(RequestAllocationTest, NotSampledRequestWithTracingOn) {
  set_access_log(false);
  start("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
            std::to_string(kCompletion.size()) + "\r\n\r\n" + std::string(kCompletion),
        "[tracing]\notlp_endpoint = \"http://127.0.0.1:9/v1/traces\"\nsample_ratio = 1.0\n");
  const std::string request = chat_request(
      false,
      "x-request-id: client-request-7\r\n"
      "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00\r\n");
  const double per_request = allocations_per_request(request);
  ASSERT_GE(per_request, 0);
  EXPECT_NE(client_->last().find("x-request-id: client-request-7"), std::string_view::npos)
      << client_->last();
  EXPECT_EQ(spans_.size(), 0u);
  std::printf("allocations per proxied request (tracing on, not sampled): %.2f\n", per_request);
  RecordProperty("allocations_per_unsampled_request", std::to_string(per_request));
  EXPECT_LE(per_request, kMaxAllocationsPerRequest);
  set_access_log(true);
}

// The request path's counters and histograms are the worker's own: every request the one worker
// served is counted in its cells (slot 1), none in the cells other threads share (slot 0), and
// /metrics shows them all once folded.
TEST_F(RequestAllocationTest, TheWorkerCountsIntoItsOwnCells) {
  start("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
        std::to_string(kCompletion.size()) + "\r\n\r\n" + std::string(kCompletion));
  constexpr int kRequests = 20;
  for (int i = 0; i < kRequests; ++i) ASSERT_EQ(client_->exchange(chat_request(false)), 200);
  const auto snapshot = store_.current();
  const RoutePool* route = nullptr;
  for (const auto& pool : snapshot->pools()) {
    if (pool->name == "m") route = pool.get();
  }
  ASSERT_NE(route, nullptr);
  const ShardedHistogram& duration = *route->instruments.duration;
  // The worker counts a request once its answer is written: the last may come after the client
  // read it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (duration.count() < kRequests && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(duration.count_in(1), static_cast<uint64_t>(kRequests));
  EXPECT_EQ(duration.count_in(0), 0u);
  const ShardedCounter& ok = *route->candidates.front().instruments.responses[2];  // 2xx
  EXPECT_EQ(ok.value_in(1), static_cast<uint64_t>(kRequests));
  EXPECT_EQ(ok.value_in(0), 0u);
  const std::string text = metrics_.render(tracker_);
  EXPECT_NE(
      text.find("rolter_request_duration_seconds_count{route=\"m\"} " + std::to_string(kRequests)),
      std::string::npos)
      << text;
}

// SPEC §19: on a route with flow control that is not saturated, a request pays the queue's one
// check and nothing else: no allocation more than on a route without a queue.
TEST_F(RequestAllocationTest, FlowControlledRouteNotSaturated) {
  set_access_log(false);
  start("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
            std::to_string(kCompletion.size()) + "\r\n\r\n" + std::string(kCompletion),
        "", "max_in_flight_per_instance = 1000\n");
  const double per_request = allocations_per_request(chat_request(false));
  ASSERT_GE(per_request, 0);
  EXPECT_NE(client_->last().find(R"("content":"hello")"), std::string_view::npos);
  EXPECT_EQ(client_->last().find("x-rolter-queue-ms"), std::string_view::npos) << "it never waited";
  std::printf("allocations per proxied request (flow control, not saturated): %.2f\n",
              per_request);
  RecordProperty("allocations_per_flow_controlled_request", std::to_string(per_request));
  EXPECT_LE(per_request, kMaxAllocationsPerRequest);
  set_access_log(true);
}

// `rolter serve` records every answered request's usage when it has a store or a control plane
// (SPEC §15): the default. Recording adds no allocation once the request's ledger line exists.
TEST_F(RequestAllocationTest, UsageRecordedRequest) {
  set_access_log(false);
  tenancy_ = &recording_;
  start("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
        std::to_string(kCompletion.size()) + "\r\n\r\n" + std::string(kCompletion));
  const double per_request = allocations_per_request(chat_request(false));
  ASSERT_GE(per_request, 0);
  EXPECT_NE(client_->last().find(R"("content":"hello")"), std::string_view::npos);
  std::printf("allocations per proxied request (usage recorded): %.2f\n", per_request);
  RecordProperty("allocations_per_recorded_request", std::to_string(per_request));
  EXPECT_LE(per_request, kMaxAllocationsPerRequest);
  // Every request was recorded, on one line: the route and target that answered.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::vector<UsageRow> rows;
  uint64_t recorded = 0;
  while (recorded < kWarmup + kMeasured && std::chrono::steady_clock::now() < deadline) {
    for (const UsageRow& row : ledger_.drain()) {
      recorded += row.counts.requests;
      rows.push_back(row);
    }
    if (recorded < kWarmup + kMeasured) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(recorded, static_cast<uint64_t>(kWarmup + kMeasured));
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows.front().key.route, "m");
  EXPECT_EQ(rows.front().key.model, "up/upstream-m");
  EXPECT_EQ(rows.front().counts.input_tokens, 3u * rows.front().counts.requests);
  set_access_log(true);
}

}  // namespace
}  // namespace rolter
