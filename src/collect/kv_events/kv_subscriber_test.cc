// The subscriber and the service against the simulator's KV-event publisher (sim/kv_publisher.h),
// which speaks vLLM's wire format and replay protocol over real ZeroMQ sockets on loopback.
#include "collect/kv_events/kv_subscriber.h"

#include <gtest/gtest.h>
#include <zmq.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "collect/kv_events/kv_event_service.h"
#include "collect/testing/wait_for.h"
#include "fleet/load_tracker.h"
#include "kv/block_keys.h"
#include "observe/metrics.h"
#include "sim/kv_publisher.h"
#include "snapshot/snapshot_store.h"

namespace rolter {
namespace {

using sim::KvEvent;
using sim::KvEventPublisher;
using sim::KvFaults;
using sim::KvFormat;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr uint32_t kBlockSize = 4;

// Block i of sequence `base`: engine hash base + i, tokens base + 4i .. base + 4i + 3, chained
// to block i - 1 of the same sequence.
std::vector<uint32_t> block_tokens(uint32_t base, uint32_t i) {
  const uint32_t first = base + 4 * i;
  return {first, first + 1, first + 2, first + 3};
}

KvEvent stored(uint32_t base, uint32_t i) {
  KvEvent e;
  e.kind = KvEvent::Kind::kBlockStored;
  e.block_hashes = {uint64_t{base} + i};
  if (i > 0) e.parent_block_hash = uint64_t{base} + i - 1;
  e.token_ids = block_tokens(base, i);
  e.block_size = kBlockSize;
  return e;
}

// The keys of blocks 0 .. n-1 of sequence `base`, as a pick computes them.
std::vector<uint64_t> keys(uint32_t base, uint32_t n) {
  std::vector<uint32_t> tokens;
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t t : block_tokens(base, i)) tokens.push_back(t);
  }
  std::vector<uint64_t> out;
  kv_block_keys(tokens, kBlockSize, kKvBaseSeed, out);
  return out;
}

constexpr uint32_t kProbe = 900000;  // the sequence of the probe batches
constexpr uint32_t kSeq = 1000;      // the sequence the tests store

std::unique_ptr<KvEventPublisher> make_publisher(zmq::context_t& context, KvFormat format,
                                                 bool replay) {
  auto publisher =
      KvEventPublisher::create(context, {.host = "127.0.0.1", .replay = replay, .format = format});
  EXPECT_TRUE(publisher) << publisher.error();
  return publisher ? std::move(*publisher) : nullptr;
}

std::string address(uint16_t port) { return "tcp://127.0.0.1:" + std::to_string(port); }

class KvSubscriberTest : public ::testing::Test {
 protected:
  void start(KvFormat format, bool replay, Clock::Duration stale_after = seconds(30)) {
    publisher_ = make_publisher(context_, format, replay);
    ASSERT_NE(publisher_, nullptr);
    subscriber_ = std::make_unique<KvSubscriber>(
        context_, kv_, clock_,
        KvSubscriberOptions{.endpoint = address(publisher_->port()),
                            .replay_endpoint = replay ? address(publisher_->replay_port()) : "",
                            .block_size = kBlockSize,
                            .stale_after = stale_after,
                            .poll = milliseconds(10),
                            .name = "test"});
    subscriber_->start();
    join();
  }
  // ZeroMQ's slow joiner: a SUB misses what is published before its connection is up. Publishes
  // the probe block until the subscriber holds it; then nothing later is lost.
  void join() {
    EXPECT_EQ(kv_.state.load(), KvStreamState::kDisconnected);
    // The subscriber applies a batch to the index before it marks the stream live: wait for both.
    ASSERT_TRUE(wait_for([&] {
      publish({stored(kProbe, 0)});
      std::this_thread::sleep_for(milliseconds(5));
      return kv_.index.contains(keys(kProbe, 1)[0]) &&
             kv_.state.load() == KvStreamState::kLive;
    }));
  }
  void publish(std::vector<KvEvent> events) { publisher_->publish(1.0, events, faults_); }
  // Publishes block i of kSeq in a batch of its own.
  void store(uint32_t i) { publish({stored(kSeq, i)}); }
  size_t held(uint32_t n, uint32_t base = kSeq) const {
    return kv_.index.leading_blocks(keys(base, n));
  }

  zmq::context_t context_{1};
  std::unique_ptr<KvEventPublisher> publisher_;
  ManualClock clock_;
  KvResidency kv_;
  std::unique_ptr<KvSubscriber> subscriber_;  // last: stopped before what it writes goes
  KvFaults faults_;

  void TearDown() override {
    if (subscriber_) subscriber_->stop();
  }
};

TEST_F(KvSubscriberTest, BothFormatsReachTheIndex) {
  for (KvFormat format : {KvFormat::kArray, KvFormat::kMap}) {
    SCOPED_TRACE(format == KvFormat::kArray ? "array" : "map");
    if (subscriber_) subscriber_->stop();
    kv_.index.clear();
    start(format, /*replay=*/false);
    for (uint32_t i = 0; i < 3; ++i) store(i);
    ASSERT_TRUE(wait_for([&] { return held(3) == 3; }));
    EXPECT_EQ(kv_.state.load(), KvStreamState::kLive);
    EXPECT_EQ(kv_.gaps.load(), 0u);
    EXPECT_EQ(kv_.decode_errors.load(), 0u);
  }
}

TEST_F(KvSubscriberTest, SkippedSeqIsAGapThatReplayRepairs) {
  start(KvFormat::kArray, /*replay=*/true);
  store(0);
  faults_.skip_seq = true;
  store(1);
  store(2);
  ASSERT_TRUE(wait_for([&] { return held(3) == 3; }));
  EXPECT_EQ(kv_.gaps.load(), 1u);
  EXPECT_EQ(kv_.state.load(), KvStreamState::kLive);
  EXPECT_EQ(kv_.index.size(), 4u) << "the probe and blocks 0-2, as without the gap";
}

// Silent batches keep their seq and stay in the replay buffer: the subscriber really missed them.
TEST_F(KvSubscriberTest, MissedBatchesAreReplayedExactly) {
  start(KvFormat::kMap, /*replay=*/true);
  store(0);
  faults_.silent = true;
  store(1);
  store(2);
  faults_.silent = false;
  store(3);
  store(4);
  ASSERT_TRUE(wait_for([&] { return held(5) == 5; })) << held(5);
  EXPECT_EQ(kv_.gaps.load(), 1u);
  EXPECT_EQ(kv_.state.load(), KvStreamState::kLive);
  EXPECT_EQ(kv_.index.size(), 6u) << "exactly what a gap-free subscriber holds";
  for (const uint64_t key : keys(kSeq, 5)) EXPECT_TRUE(kv_.index.contains(key));
}

TEST_F(KvSubscriberTest, WithoutReplayAGapClearsAndRebuildsFromLiveEvents) {
  start(KvFormat::kArray, /*replay=*/false);
  store(0);
  ASSERT_TRUE(wait_for([&] { return held(1) == 1; }));
  faults_.silent = true;
  store(1);
  faults_.silent = false;
  store(2);  // its parent was never seen: it cannot be keyed
  constexpr uint32_t kOther = 2000;
  publish({stored(kOther, 0)});
  publish({stored(kOther, 1)});
  ASSERT_TRUE(wait_for([&] { return held(2, kOther) == 2; }));
  EXPECT_EQ(kv_.gaps.load(), 1u);
  EXPECT_EQ(held(3), 0u) << "cleared at the gap";
  EXPECT_EQ(kv_.index.size(), 2u);
  EXPECT_EQ(kv_.state.load(), KvStreamState::kLive);
}

TEST_F(KvSubscriberTest, GarbageIsCountedAndSkipped) {
  start(KvFormat::kArray, /*replay=*/true);
  faults_.garbage = true;
  store(0);
  store(1);  // chained to a block the garbage held: not keyable
  publish({stored(kSeq + 500, 0)});
  ASSERT_TRUE(wait_for([&] { return held(1, kSeq + 500) == 1; }));
  EXPECT_EQ(kv_.decode_errors.load(), 1u);
  EXPECT_EQ(kv_.gaps.load(), 0u);
  EXPECT_EQ(kv_.state.load(), KvStreamState::kLive);
}

TEST_F(KvSubscriberTest, MalformedMessagesAreDecodeErrors) {
  start(KvFormat::kArray, /*replay=*/false);
  // A second publisher-like PUB on its own port would need a second SUB; instead the subscriber
  // is pointed at a raw PUB that sends two-frame messages.
  subscriber_->stop();
  zmq::socket_t raw(context_, zmq::socket_type::pub);
  raw.set(zmq::sockopt::linger, 0);
  raw.bind("tcp://127.0.0.1:*");
  const std::string endpoint = raw.get(zmq::sockopt::last_endpoint);
  KvResidency kv;
  KvSubscriber subscriber(context_, kv, clock_,
                          {.endpoint = endpoint, .poll = milliseconds(10), .name = "raw"});
  subscriber.start();
  ASSERT_TRUE(wait_for([&] {
    raw.send(zmq::str_buffer(""), zmq::send_flags::sndmore);
    raw.send(zmq::str_buffer("short"), zmq::send_flags::none);  // no payload, seq not 8 bytes
    std::this_thread::sleep_for(milliseconds(5));
    return kv.decode_errors.load() > 0;
  }));
  EXPECT_EQ(kv.state.load(), KvStreamState::kDisconnected) << "no well-formed message yet";
  subscriber.stop();
}

TEST_F(KvSubscriberTest, SilenceBeyondStaleSecsIsStaleThenRecovers) {
  start(KvFormat::kArray, /*replay=*/true, /*stale_after=*/seconds(1));
  store(0);
  ASSERT_TRUE(wait_for([&] { return held(1) == 1; }));
  faults_.silent = true;
  store(1);
  clock_.advance(seconds(1));  // the subscriber's clock: no wall-clock wait
  ASSERT_TRUE(wait_for([&] { return kv_.state.load() == KvStreamState::kStale; }));
  EXPECT_FALSE(kv_.live());
  faults_.silent = false;
  store(2);
  ASSERT_TRUE(wait_for([&] { return kv_.live() && held(3) == 3; }));
  EXPECT_EQ(kv_.gaps.load(), 1u) << "the silent batch was missed, and replayed";
}

TEST_F(KvSubscriberTest, StopDisconnects) {
  start(KvFormat::kArray, /*replay=*/false);
  subscriber_->stop();
  EXPECT_EQ(kv_.state.load(), KvStreamState::kDisconnected);
  subscriber_->stop();  // idempotent
}

// ---------------------------------------------------------------------------------------------
// The service: subscribers follow the snapshot.

class KvEventServiceTest : public ::testing::Test {
 protected:
  void publish(std::optional<KvEventsConfig> kv_events) {
    Config config;
    ProviderConfig p;
    p.name = "p";
    p.instances.push_back(InstanceConfig{.base_url = "http://127.0.0.1:1", .kv_events = kv_events});
    config.providers.push_back(std::move(p));
    RouteConfig route{.name = "m", .strategy = "power_of_two"};
    route.targets.push_back(TargetConfig{"p", "up", {}});
    config.routes.push_back(std::move(route));
    auto snapshot =
        build_snapshot(std::move(config), tracker_, BalancerDeps{}, ++version_, &metrics_);
    ASSERT_TRUE(snapshot);
    store_.publish(*snapshot);
  }
  KvResidency& kv() { return tracker_.instance("p", "http://127.0.0.1:1").kv; }

  zmq::context_t context_{1};
  LoadTracker tracker_;
  Metrics metrics_;
  SnapshotStore store_;
  uint64_t version_ = 0;
};

TEST_F(KvEventServiceTest, SubscribesFollowsReloadsAndExportsMetrics) {
  auto publisher = make_publisher(context_, KvFormat::kArray, /*replay=*/false);
  ASSERT_NE(publisher, nullptr);
  KvEventsConfig config{
      .endpoint = address(publisher->port()), .block_size = kBlockSize, .max_blocks = 100};
  publish(config);
  KvEventService service(store_);
  service.start();
  ASSERT_TRUE(wait_for([&] { return kv().subscribed.load(); }));
  EXPECT_EQ(kv().block_size.load(), kBlockSize);
  EXPECT_EQ(kv().index.max_blocks(), 100u);
  KvFaults faults;
  ASSERT_TRUE(wait_for([&] {
    std::vector<KvEvent> events = {stored(kProbe, 0)};
    publisher->publish(1.0, events, faults);
    std::this_thread::sleep_for(milliseconds(5));
    return kv().live();
  }));
  const std::string endpoint = "endpoint=\"p@http://127.0.0.1:1\"";
  ASSERT_TRUE(wait_for([&] {
    const std::string text = metrics_.render(tracker_);
    return text.find("rolter_kv_events_state{" + endpoint + ",state=\"live\"} 1\n") !=
               std::string::npos &&
           text.find("rolter_kv_events_state{" + endpoint + ",state=\"gap\"} 0\n") !=
               std::string::npos &&
           text.find("rolter_kv_events_total{" + endpoint + "} ") != std::string::npos;
  }));
  EXPECT_EQ(service.subscribed(), 1u);

  publish(std::nullopt);  // the reload drops kv_events
  ASSERT_TRUE(wait_for([&] { return !kv().subscribed.load(); }));
  EXPECT_EQ(kv().state.load(), KvStreamState::kDisconnected);
  EXPECT_EQ(service.subscribed(), 0u);
  // Its series leave /metrics with the subscription.
  EXPECT_EQ(metrics_.render(tracker_).find("rolter_kv_events_state{" + endpoint),
            std::string::npos);

  publish(config);
  ASSERT_TRUE(wait_for([&] { return kv().subscribed.load(); }));
  service.stop();
  EXPECT_FALSE(kv().subscribed.load());
  EXPECT_EQ(kv().state.load(), KvStreamState::kDisconnected);
  service.stop();  // idempotent
}

}  // namespace
}  // namespace rolter
