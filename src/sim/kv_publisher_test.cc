#include "sim/kv_publisher.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include <iterator>
#include <numeric>

#include "sim/engine_model.h"

namespace rolter::sim {
namespace {

using Json = nlohmann::json;

uint64_t read_seq(const zmq::message_t& frame) {
  EXPECT_EQ(frame.size(), 8u);
  uint64_t seq = 0;
  for (size_t i = 0; i < frame.size(); ++i) {
    seq = (seq << 8) | static_cast<const uint8_t*>(frame.data())[i];
  }
  return seq;
}

std::string seq_frame(uint64_t seq) {
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i, seq >>= 8) out[static_cast<size_t>(i)] = static_cast<char>(seq);
  return out;
}

Json decode(const zmq::message_t& payload) {
  const auto* data = static_cast<const uint8_t*>(payload.data());
  return Json::from_msgpack(data, data + payload.size(), /*strict=*/true,
                            /*allow_exceptions=*/false);
}

// Feeds a model's KV events to a publisher, as rolter-sim's engines do.
struct Forwarder : KvEventSink {
  KvEventPublisher* publisher = nullptr;
  KvFaults faults;
  void on_kv_events(double at_ms, std::span<const KvEvent> events) override {
    publisher->publish(1.7e9 + at_ms / 1000, events, faults);
  }
};

class KvPublisherTest : public ::testing::TestWithParam<KvFormat> {
 protected:
  void SetUp() override {
    auto p = KvEventPublisher::create(context_, {.replay = true, .format = GetParam()});
    ASSERT_TRUE(p) << p.error();
    publisher_ = std::move(*p);
    forwarder_.publisher = publisher_.get();
    sub_.set(zmq::sockopt::subscribe, "");
    sub_.connect("tcp://127.0.0.1:" + std::to_string(publisher_->port()));
    // Slow joiner: a SUB only sees messages published after its subscription reached the
    // publisher, so publish until one arrives. What came before is fetched by replay if needed.
    for (int i = 0; i < 1000 && !first_; ++i) {
      KvFaults none;
      const KvEvent cleared{.kind = KvEvent::Kind::kAllBlocksCleared};
      publisher_->publish(0, std::span(&cleared, 1), none);
      std::vector<zmq::message_t> frames;
      zmq::pollitem_t item{sub_.handle(), 0, ZMQ_POLLIN, 0};
      if (zmq::poll(&item, 1, std::chrono::milliseconds(10)) > 0) {
        ASSERT_TRUE(zmq::recv_multipart(sub_, std::back_inserter(frames)));
        first_ = read_seq(frames[1]);
      }
    }
    ASSERT_TRUE(first_) << "the subscriber never connected";
    // Drain the rest of the handshake batches.
    handshake_end_ = publisher_->next_seq();
    last_seen_ = *first_;
    while (last_seen_ + 1 < handshake_end_) last_seen_ = read_seq(receive()[1]);
  }

  std::vector<zmq::message_t> receive() {
    std::vector<zmq::message_t> frames;
    zmq::pollitem_t item{sub_.handle(), 0, ZMQ_POLLIN, 0};
    // Generous: only a broken publisher takes this long, and then the test fails anyway.
    if (zmq::poll(&item, 1, std::chrono::seconds(10)) == 0) {
      ADD_FAILURE() << "no message";
      frames.resize(3);
      return frames;
    }
    EXPECT_TRUE(zmq::recv_multipart(sub_, std::back_inserter(frames)));
    EXPECT_EQ(frames.size(), 3u);
    frames.resize(3);
    return frames;
  }

  // Drives a small engine model through stores, evictions and a clear.
  void run_traffic(EngineModel& model) {
    double now = 0;
    std::vector<ModelEvent> out;
    for (uint64_t id = 0; id < 12; ++id) {
      std::vector<uint32_t> tokens(10 + 7 * (id % 4));
      std::iota(tokens.begin(), tokens.end(), static_cast<uint32_t>(id % 5) * 1000);
      model.submit(now, {.id = id, .tokens = tokens, .output_tokens = 2});
      while (auto t = model.next_event_ms()) model.advance(*t, out);
      now += 100;
    }
    model.reset_prefix_cache(now);
  }

  // Checks one decoded batch; returns the number of events.
  size_t check_batch(const Json& batch, size_t block_size) {
    EXPECT_FALSE(batch.is_discarded());
    Json events;
    if (GetParam() == KvFormat::kArray) {
      EXPECT_TRUE(batch.is_array());
      EXPECT_EQ(batch.size(), 3u);
      EXPECT_TRUE(batch[0].is_number_float());
      EXPECT_EQ(batch[2], 0);
      events = batch[1];
    } else {
      EXPECT_TRUE(batch.is_object());
      EXPECT_TRUE(batch["ts"].is_number_float());
      EXPECT_EQ(batch["data_parallel_rank"], 0);
      events = batch["events"];
    }
    for (const Json& e : events) {
      const bool array = GetParam() == KvFormat::kArray;
      const std::string tag = array ? e[0].get<std::string>() : e["type"].get<std::string>();
      if (tag == "BlockStored") {
        const Json& hashes = array ? e[1] : e["block_hashes"];
        const Json& tokens = array ? e[3] : e["token_ids"];
        const Json& size = array ? e[4] : e["block_size"];
        EXPECT_EQ(array ? e.size() : 8u, 8u);
        EXPECT_TRUE(hashes[0].is_number_unsigned());
        EXPECT_EQ(size, block_size);
        EXPECT_EQ(tokens.size() % block_size, 0u);
        EXPECT_EQ(tokens.size(), hashes.size() * block_size);
        EXPECT_EQ(array ? e[6] : e["medium"], "GPU");
        ++stored_;
      } else if (tag == "BlockRemoved") {
        EXPECT_FALSE((array ? e[1] : e["block_hashes"]).empty());
        ++removed_;
      } else {
        EXPECT_EQ(tag, "AllBlocksCleared");
        ++cleared_;
      }
    }
    return events.size();
  }

  zmq::context_t context_;
  std::unique_ptr<KvEventPublisher> publisher_;
  Forwarder forwarder_;
  zmq::socket_t sub_{context_, zmq::socket_type::sub};
  std::optional<uint64_t> first_;
  uint64_t handshake_end_ = 0;
  uint64_t last_seen_ = 0;
  size_t stored_ = 0, removed_ = 0, cleared_ = 0;
};

TEST_P(KvPublisherTest, EveryEventDecodesAndSeqIsGapFree) {
  last_seen_ = handshake_end_ - 1;
  EngineModel model({.kv_blocks = 6, .block_size = 4}, &forwarder_);
  run_traffic(model);
  const uint64_t end = publisher_->next_seq();
  ASSERT_GT(end, handshake_end_);
  for (uint64_t expect = handshake_end_; expect < end; ++expect) {
    auto frames = receive();
    EXPECT_EQ(frames[0].size(), 0u);  // vLLM's default topic
    EXPECT_EQ(read_seq(frames[1]), expect);
    check_batch(decode(frames[2]), 4);
  }
  EXPECT_GT(stored_, 0u);
  EXPECT_GT(removed_, 0u);
  EXPECT_EQ(cleared_, 1u);
}

TEST_P(KvPublisherTest, SkipFaultLeavesOneGapAndGarbageDoesNotDecode) {
  const KvEvent cleared{.kind = KvEvent::Kind::kAllBlocksCleared};
  KvFaults faults{.skip_seq = true};
  publisher_->publish(1, std::span(&cleared, 1), faults);
  EXPECT_FALSE(faults.skip_seq);
  EXPECT_EQ(read_seq(receive()[1]), handshake_end_ + 1);
  faults.garbage = true;
  publisher_->publish(2, std::span(&cleared, 1), faults);
  auto frames = receive();
  EXPECT_EQ(read_seq(frames[1]), handshake_end_ + 2);
  EXPECT_TRUE(decode(frames[2]).is_discarded());
  // Silent: nothing is sent, but the seq is spent and replay has it.
  faults.silent = true;
  publisher_->publish(3, std::span(&cleared, 1), faults);
  faults.silent = false;
  publisher_->publish(4, std::span(&cleared, 1), faults);
  EXPECT_EQ(read_seq(receive()[1]), handshake_end_ + 4);
}

// Every receive in these tests has a deadline: a publisher that stops answering fails the test.
constexpr int kReceiveDeadlineMs = 10000;

TEST_P(KvPublisherTest, ReplayReturnsTheBufferedRangeThenTheEndMarker) {
  EngineModel model({.kv_blocks = 6, .block_size = 4}, &forwarder_);
  run_traffic(model);
  const uint64_t end = publisher_->next_seq();
  const std::string address = "tcp://127.0.0.1:" + std::to_string(publisher_->replay_port());

  // A DEALER that frames like REQ: [empty, start_seq] -> [empty, seq, payload]... [empty, END, ""].
  zmq::socket_t dealer(context_, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::rcvtimeo, kReceiveDeadlineMs);  // a missing reply fails, never hangs
  dealer.connect(address);
  const uint64_t start = handshake_end_ + 1;
  dealer.send(zmq::message_t(), zmq::send_flags::sndmore);
  dealer.send(zmq::buffer(seq_frame(start)), zmq::send_flags::none);
  for (uint64_t expect = start;; ++expect) {
    std::vector<zmq::message_t> frames;
    ASSERT_TRUE(zmq::recv_multipart(dealer, std::back_inserter(frames)));
    ASSERT_EQ(frames.size(), 3u);
    EXPECT_EQ(frames[0].size(), 0u);
    const uint64_t seq = read_seq(frames[1]);
    if (seq == ~uint64_t{0}) {
      EXPECT_EQ(frames[2].size(), 0u);
      EXPECT_EQ(expect, end);
      break;
    }
    ASSERT_EQ(seq, expect);
    check_batch(decode(frames[2]), 4);
  }

  // A REQ client gets the first reply (REQ takes one answer per request): the start batch.
  zmq::socket_t req(context_, zmq::socket_type::req);
  req.set(zmq::sockopt::rcvtimeo, kReceiveDeadlineMs);
  req.connect(address);
  req.send(zmq::buffer(seq_frame(end - 1)), zmq::send_flags::none);
  std::vector<zmq::message_t> frames;
  ASSERT_TRUE(zmq::recv_multipart(req, std::back_inserter(frames)));
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(read_seq(frames[0]), end - 1);
}

INSTANTIATE_TEST_SUITE_P(BothEncodings, KvPublisherTest,
                         ::testing::Values(KvFormat::kArray, KvFormat::kMap), [](const auto& info) {
                           return info.param == KvFormat::kArray ? "array" : "map";
                         });

}  // namespace
}  // namespace rolter::sim
