#include "proxy/decision_client.h"

#include <gtest/gtest.h>
#include <prometheus/counter.h>
#include <prometheus/histogram.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "observe/sharded_series.h"

namespace rolter {
namespace {

using Json = nlohmann::json;
using Outcome = Metrics::DecisionOutcome;
using std::chrono::milliseconds;

// Every wait on the I/O thread has this deadline: a hung call fails the test instead of hanging it.
constexpr auto kDeadline = std::chrono::seconds(10);

PolicyRoute::Decision two_models() {
  PolicyRoute::Decision d;
  d.model = "jev-latest";
  d.instructions = "Pick the smallest model that can handle the request well.";
  d.criteria = {{"qwen3-0.6b", "fast, simple requests"}, {"qwen3-32b", std::nullopt}};
  return d;
}

TEST(WantsDecision, OnlyOnRoutesThatAskAndNotForEmbeddings) {
  PolicyRoute asks;
  asks.decision = two_models();
  const PolicyRoute silent;
  EXPECT_TRUE(wants_decision(ApiKind::kChatCompletions, asks));
  EXPECT_TRUE(wants_decision(ApiKind::kCompletions, asks));
  EXPECT_TRUE(wants_decision(ApiKind::kResponses, asks));
  EXPECT_TRUE(wants_decision(ApiKind::kMessages, asks));
  EXPECT_FALSE(wants_decision(ApiKind::kEmbeddings, asks));
  EXPECT_FALSE(wants_decision(ApiKind::kChatCompletions, silent));
}

// ---------------------------------------------------------------------------------------------
// Against a loopback HTTP server.

// A tiny HTTP/1.1 server on 127.0.0.1:0: reads one request per connection and answers `reply`
// verbatim, or (with an empty reply) never answers and holds the connection until destroyed. It
// records the last request it read. Runs on the given io_context.
class LoopbackServer {
 public:
  LoopbackServer(asio::io_context& io, std::string reply)
      : acceptor_(io, {asio::ip::make_address("127.0.0.1"), 0}), reply_(std::move(reply)) {
    asio::co_spawn(io, accept_loop(), asio::detached);
  }

  uint16_t port() const { return acceptor_.local_endpoint().port(); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port()); }
  std::string last_request() {
    MutexLock lock(mutex_);
    return last_request_;
  }

 private:
  Task<void> accept_loop() {
    for (;;) {
      auto [ec, socket] = co_await acceptor_.async_accept(kNoThrow);
      if (ec) co_return;
      held_.push_back(std::make_shared<asio::ip::tcp::socket>(std::move(socket)));
      asio::co_spawn(acceptor_.get_executor(), serve(held_.back()), asio::detached);
    }
  }

  Task<void> serve(std::shared_ptr<asio::ip::tcp::socket> socket) {
    std::string data;
    auto [ec, head] =
        co_await asio::async_read_until(*socket, asio::dynamic_buffer(data), "\r\n\r\n", kNoThrow);
    if (ec) co_return;
    size_t length = 0;
    if (auto at = data.find("Content-Length: "); at != std::string::npos) {
      length = std::stoul(data.substr(at + 16));
    }
    if (data.size() < head + length) {
      auto [body_ec, n] =
          co_await asio::async_read(*socket, asio::dynamic_buffer(data),
                                    asio::transfer_exactly(head + length - data.size()), kNoThrow);
      if (body_ec) co_return;
    }
    {
      MutexLock lock(mutex_);
      last_request_ = data;
    }
    if (reply_.empty()) co_return;  // never answers; the socket stays open in held_
    co_await asio::async_write(*socket, asio::buffer(reply_), kNoThrow);
  }

  asio::ip::tcp::acceptor acceptor_;
  std::string reply_;
  std::vector<std::shared_ptr<asio::ip::tcp::socket>> held_;
  Mutex mutex_;
  std::string last_request_ GUARDED_BY(mutex_);
};

std::string http_reply(int status, std::string_view body) {
  return "HTTP/1.1 " + std::to_string(status) +
         " X\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

constexpr std::string_view kGoodReply =
    R"({"answers":{"model_selection":{"choice":"qwen3-32b",
        "probabilities":{"qwen3-0.6b":0.1,"qwen3-32b":0.9},"confidence":0.8}}})";

class DecisionCallTest : public ::testing::Test {
 protected:
  DecisionCallTest() {
    thread_ = std::thread([this] { io_.run(); });
  }
  ~DecisionCallTest() override {
    io_.stop();
    thread_.join();
  }

  // A server that answers `reply` (empty: never answers); it lives as long as the test.
  LoopbackServer& serve(std::string reply) {
    servers_.push_back(std::make_unique<LoopbackServer>(io_, std::move(reply)));
    return *servers_.back();
  }

  // Points the decision at 127.0.0.1:`port` (with an API key) and asks once.
  std::optional<DecisionVerdict> ask(uint16_t port, milliseconds timeout) {
    provider_.name = "jev";
    provider_.kind = ProviderKind::kDecisionService;
    provider_.api_key = "sk-decide";
    provider_.endpoints = {Endpoint{.base_url = "http://127.0.0.1:" + std::to_string(port),
                                    .host = "127.0.0.1",
                                    .port = std::to_string(port),
                                    .host_header = "127.0.0.1:" + std::to_string(port),
                                    .base_path = ""}};
    decision_.provider = &provider_;
    auto done = asio::co_spawn(
        io_, ask_decision_service(decision_, "r", R"({"messages":[]})", tls_, timeout),
        asio::use_future);
    if (done.wait_for(kDeadline) != std::future_status::ready) {
      ADD_FAILURE() << "no result within the deadline";
      std::abort();  // the coroutine still references this fixture
    }
    return done.get();
  }

  double count(Outcome outcome) const {
    return static_cast<double>(
        decision_.instruments.requests[static_cast<size_t>(outcome)]->value());
  }

  asio::io_context io_{1};
  asio::executor_work_guard<asio::io_context::executor_type> work_{io_.get_executor()};
  asio::ssl::context tls_{asio::ssl::context::tls_client};
  Metrics metrics_;
  SeriesLease lease_;
  Provider provider_;
  PolicyRoute::Decision decision_ = [this] {
    auto d = two_models();
    d.instruments = metrics_.decision("r", lease_);
    return d;
  }();
  // Destroyed before io_ and after the I/O thread has stopped (the destructor joins it first).
  std::vector<std::unique_ptr<LoopbackServer>> servers_;
  std::thread thread_;
};

TEST_F(DecisionCallTest, AValidReplyIsAVerdict) {
  LoopbackServer& server = serve(http_reply(200, kGoodReply));
  const auto verdict = ask(server.port(), kDecisionTimeout);
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->choice, "qwen3-32b");
  EXPECT_DOUBLE_EQ(verdict->confidence, 0.8);
  EXPECT_EQ(verdict->probability("qwen3-32b"), 0.9);
  EXPECT_EQ(count(Outcome::kOk), 1);
  const std::string request = server.last_request();
  EXPECT_EQ(request.rfind("POST /v1/systemone HTTP/1.1\r\n", 0), 0u) << request;
  EXPECT_NE(request.find("Authorization: Bearer sk-decide\r\n"), std::string::npos) << request;
  const Json body = Json::parse(request.substr(request.find("\r\n\r\n") + 4));
  EXPECT_EQ(body["state"], Json::parse(R"({"messages":[]})"));
  EXPECT_EQ(body["model"], "jev-latest");
}

TEST_F(DecisionCallTest, AServerThatNeverAnswersIsATimeout) {
  LoopbackServer& server = serve("");
  EXPECT_FALSE(ask(server.port(), milliseconds(100)));
  EXPECT_EQ(count(Outcome::kTimeout), 1);
  EXPECT_EQ(count(Outcome::kOk), 0);
}

TEST_F(DecisionCallTest, NonSuccessStatusesDoNotVote) {
  for (int status : {500, 404, 302}) {
    SCOPED_TRACE(status);
    EXPECT_FALSE(ask(serve(http_reply(status, kGoodReply)).port(), kDecisionTimeout));
  }
  EXPECT_EQ(count(Outcome::kStatus), 3);
}

TEST_F(DecisionCallTest, AnUnreadableReplyDoesNotVote) {
  EXPECT_FALSE(ask(serve(http_reply(200, "I am not JSON")).port(), kDecisionTimeout));
  EXPECT_EQ(count(Outcome::kInvalid), 1);
}

TEST_F(DecisionCallTest, AnOutOfRangeConfidenceDoesNotVote) {
  const auto reply = http_reply(200, R"({"answers":{"model_selection":{"choice":"a",
                                          "confidence":1.5}}})");
  EXPECT_FALSE(ask(serve(reply).port(), kDecisionTimeout));
  EXPECT_EQ(count(Outcome::kInvalid), 1);
}

TEST_F(DecisionCallTest, ARefusedConnectionIsAnError) {
  // A port that was free a moment ago: bound, noted, and closed again.
  uint16_t port = 0;
  {
    asio::ip::tcp::acceptor probe(io_, {asio::ip::make_address("127.0.0.1"), 0});
    port = probe.local_endpoint().port();
  }
  EXPECT_FALSE(ask(port, kDecisionTimeout));
  EXPECT_EQ(count(Outcome::kError), 1);
}

}  // namespace
}  // namespace rolter
