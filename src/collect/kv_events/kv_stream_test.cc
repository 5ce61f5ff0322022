#include "collect/kv_events/kv_stream.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "kv/block_keys.h"

namespace rolter {
namespace {

using std::chrono::seconds;
using Json = nlohmann::json;

constexpr uint32_t kBlockSize = 4;

// Block i of one sequence: engine hash 100 + i, tokens 4i .. 4i+3, chained to block i - 1.
std::vector<uint32_t> block_tokens(uint32_t i) { return {4 * i, 4 * i + 1, 4 * i + 2, 4 * i + 3}; }

// A vLLM array-format batch that stores block i (as the start of a sequence when `first`).
std::string stored(uint32_t i, bool first = false) {
  Json parent = (i == 0 || first) ? Json(nullptr) : Json(uint64_t{100 + i - 1});
  Json tokens = Json::array();
  for (uint32_t t : block_tokens(i)) tokens.push_back(t);
  Json event = Json::array({"BlockStored", Json::array({uint64_t{100 + i}}), parent, tokens,
                            kBlockSize, nullptr, "GPU", nullptr});
  std::vector<uint8_t> bytes = Json::to_msgpack(Json::array({1.0, Json::array({event}), 0}));
  return std::string(bytes.begin(), bytes.end());
}

std::span<const uint8_t> bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// The keys of blocks 0 .. n-1 of the sequence, as a pick computes them.
std::vector<uint64_t> keys(uint32_t n) {
  std::vector<uint32_t> tokens;
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t t : block_tokens(i)) tokens.push_back(t);
  }
  std::vector<uint64_t> out;
  kv_block_keys(tokens, kBlockSize, kKvBaseSeed, out);
  return out;
}

class KvStreamTest : public ::testing::Test {
 protected:
  KvStream make(bool replay) {
    return KvStream(
        kv_, clock_,
        {.block_size = kBlockSize, .stale_after = seconds(10), .replay = replay, .name = "test"});
  }
  // Feeds seq with block `block`, expecting no replay request.
  void feed(KvStream& stream, uint64_t seq, uint32_t block) {
    const std::string payload = stored(block);
    EXPECT_EQ(stream.on_message(seq, bytes(payload)), std::nullopt) << "seq " << seq;
  }
  size_t held(uint32_t n) const { return kv_.index.leading_blocks(keys(n)); }

  KvResidency kv_;
  ManualClock clock_;
};

TEST_F(KvStreamTest, StartsDisconnectedAndGoesLiveInOrder) {
  KvStream stream = make(false);
  EXPECT_EQ(stream.state(), KvStreamState::kDisconnected);
  for (uint32_t i = 0; i < 3; ++i) feed(stream, 40 + i, i);  // joins a running stream at 40
  EXPECT_EQ(stream.state(), KvStreamState::kLive);
  EXPECT_TRUE(kv_.live());
  EXPECT_EQ(held(3), 3u);
  EXPECT_EQ(kv_.events.load(), 3u);
  EXPECT_EQ(kv_.gaps.load(), 0u);
  EXPECT_EQ(stream.last_seq(), 42u);
}

TEST_F(KvStreamTest, GapWithReplayIsRepairedExactly) {
  KvStream stream = make(true);
  feed(stream, 0, 0);
  feed(stream, 1, 1);
  // 2 and 3 are lost; 4 reveals the gap.
  const std::string four = stored(4);
  EXPECT_EQ(stream.on_message(4, bytes(four)), 1u) << "replay from the last seq seen";
  EXPECT_EQ(stream.state(), KvStreamState::kGap);
  EXPECT_FALSE(kv_.live());
  EXPECT_EQ(kv_.gaps.load(), 1u);
  // 5 arrives while the replay is pending: it waits.
  const std::string five = stored(5);
  EXPECT_EQ(stream.on_message(5, bytes(five)), std::nullopt);
  EXPECT_EQ(held(6), 2u);

  KvReplayResult reply{.complete = true};
  for (uint32_t seq = 1; seq <= 5; ++seq) reply.batches.push_back({seq, stored(seq)});
  EXPECT_EQ(stream.on_replay(reply), std::nullopt);
  EXPECT_EQ(stream.state(), KvStreamState::kLive);
  EXPECT_EQ(held(6), 6u) << "2 and 3 from the replay, then 4 and 5 in order";
  EXPECT_EQ(kv_.index.size(), 6u);
  EXPECT_EQ(kv_.events.load(), 6u) << "each batch applied once";
  EXPECT_EQ(stream.last_seq(), 5u);
  feed(stream, 6, 6);
  EXPECT_EQ(held(7), 7u);
  EXPECT_EQ(kv_.gaps.load(), 1u);
}

TEST_F(KvStreamTest, ReplayAcceptsSeqsThePublisherNeverSent) {
  KvStream stream = make(true);
  feed(stream, 0, 0);
  const std::string two = stored(1);  // seq 1 was skipped by the publisher; nothing was lost
  ASSERT_EQ(stream.on_message(2, bytes(two)), 0u);
  KvReplayResult reply{.complete = true};
  reply.batches = {{0, stored(0)}, {2, stored(1)}};
  EXPECT_EQ(stream.on_replay(reply), std::nullopt);
  EXPECT_EQ(stream.state(), KvStreamState::kLive);
  EXPECT_EQ(held(2), 2u);
  EXPECT_EQ(stream.replays_failed(), 0u);
}

TEST_F(KvStreamTest, FailedReplayClearsAndRebuildsFromTheGapMessage) {
  struct Case {
    const char* what;
    KvReplayResult reply;
  };
  const Case cases[] = {
      {"timed out",
       {.batches = {{1, stored(1)}, {2, stored(2)}}, .complete = false, .error = "timeout"}},
      {"buffer no longer reaches back",
       {.batches = {{3, stored(3)}, {4, stored(4, true)}}, .complete = true}},
      {"empty buffer", {.batches = {}, .complete = true}},
      {"no end marker, no reason given", {.batches = {{1, stored(1)}, {4, stored(4)}}}},
      {"end marker before the needed seq",
       {.batches = {{1, stored(1)}, {2, stored(2)}}, .complete = true}},
      {"seqs out of order",
       {.batches = {{1, stored(1)}, {3, stored(3)}, {2, stored(2)}}, .complete = true}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    KvResidency kv;
    KvStream stream(kv, clock_, {.block_size = kBlockSize, .replay = true, .name = "test"});
    for (uint32_t i = 0; i < 2; ++i) {
      const std::string payload = stored(i);
      ASSERT_EQ(stream.on_message(i, bytes(payload)), std::nullopt);
    }
    // Seq 5 starts a new sequence (no parent), so it can be held after a clear.
    const std::string five = stored(5, /*first=*/true);
    ASSERT_EQ(stream.on_message(5, bytes(five)), 1u);
    EXPECT_EQ(stream.on_replay(c.reply), std::nullopt);
    EXPECT_EQ(stream.state(), KvStreamState::kLive);
    EXPECT_EQ(stream.replays_failed(), 1u);
    EXPECT_FALSE(kv.index.contains(keys(1)[0])) << "cleared";
    EXPECT_EQ(kv.index.size(), 1u) << "rebuilt from the gap message";
    EXPECT_EQ(stream.last_seq(), 5u);
  }
}

TEST_F(KvStreamTest, GapWithoutReplayClearsAndRebuildsFromLiveEvents) {
  KvStream stream = make(false);
  feed(stream, 0, 0);
  feed(stream, 1, 1);
  const std::string later = stored(7, /*first=*/true);
  EXPECT_EQ(stream.on_message(3, bytes(later)), std::nullopt);
  EXPECT_EQ(kv_.gaps.load(), 1u);
  EXPECT_EQ(stream.state(), KvStreamState::kLive);
  EXPECT_EQ(held(2), 0u) << "what the index held before the gap is gone";
  EXPECT_EQ(kv_.index.size(), 1u);
  // A block whose parent was stored during the gap cannot be keyed: still not held.
  feed(stream, 4, 3);
  EXPECT_EQ(kv_.index.size(), 1u);
}

TEST_F(KvStreamTest, StaleAfterStaleSecsAndBack) {
  KvStream stream = make(false);
  feed(stream, 0, 0);
  clock_.advance(seconds(9));
  stream.check_stale();
  EXPECT_EQ(stream.state(), KvStreamState::kLive);
  clock_.advance(seconds(1));
  stream.check_stale();
  EXPECT_EQ(stream.state(), KvStreamState::kStale);
  EXPECT_FALSE(kv_.live());
  EXPECT_EQ(held(1), 1u) << "the index is kept, only not trusted";
  feed(stream, 1, 1);
  EXPECT_EQ(stream.state(), KvStreamState::kLive);
  EXPECT_EQ(held(2), 2u);
  stream.check_stale();
  EXPECT_EQ(stream.state(), KvStreamState::kLive) << "the message reset the timer";
}

TEST_F(KvStreamTest, DisconnectedIsNeverStale) {
  KvStream stream = make(false);
  clock_.advance(seconds(60));
  stream.check_stale();
  EXPECT_EQ(stream.state(), KvStreamState::kDisconnected);
}

TEST_F(KvStreamTest, UndecodablePayloadIsCountedAndSkipped) {
  KvStream stream = make(true);
  feed(stream, 0, 0);
  const std::string garbage = "\xc1 not msgpack";
  EXPECT_EQ(stream.on_message(1, bytes(garbage)), std::nullopt);
  EXPECT_EQ(kv_.decode_errors.load(), 1u);
  EXPECT_EQ(stream.state(), KvStreamState::kLive);
  feed(stream, 2, 2);  // seq 1 counts as seen: no gap
  EXPECT_EQ(kv_.gaps.load(), 0u);
  EXPECT_EQ(kv_.events.load(), 2u);
  stream.on_malformed();
  EXPECT_EQ(kv_.decode_errors.load(), 2u);
  EXPECT_EQ(stream.state(), KvStreamState::kLive);
  EXPECT_EQ(stream.last_seq(), 2u);
}

TEST_F(KvStreamTest, PublisherRestartClearsAndFollowsTheNewStream) {
  KvStream stream = make(true);
  feed(stream, 10, 0);
  feed(stream, 11, 1);
  const std::string fresh = stored(5, /*first=*/true);
  EXPECT_EQ(stream.on_message(0, bytes(fresh)), std::nullopt) << "no replay of the old stream";
  EXPECT_EQ(stream.restarts(), 1u);
  EXPECT_EQ(kv_.gaps.load(), 0u);
  EXPECT_EQ(stream.state(), KvStreamState::kLive);
  EXPECT_EQ(held(2), 0u);
  EXPECT_EQ(kv_.index.size(), 1u);
  EXPECT_EQ(stream.last_seq(), 0u);
}

TEST_F(KvStreamTest, AStreamThatResumesInOrderAfterADisconnectKeepsItsIndex) {
  KvStream stream = make(true);
  feed(stream, 0, 0);
  feed(stream, 1, 1);
  stream.disconnect();
  EXPECT_EQ(stream.state(), KvStreamState::kDisconnected);
  EXPECT_EQ(held(2), 2u) << "kept while disconnected, though not trusted";
  feed(stream, 2, 2);  // nothing was missed
  EXPECT_EQ(held(3), 3u);
  EXPECT_EQ(kv_.gaps.load(), 0u);
  EXPECT_EQ(stream.state(), KvStreamState::kLive);
}

TEST_F(KvStreamTest, AStreamThatResumesPastAGapAfterADisconnectIsRepairedAsAGap) {
  KvStream stream = make(true);
  feed(stream, 0, 0);
  feed(stream, 1, 1);
  stream.disconnect();
  const std::string later = stored(3);
  EXPECT_EQ(stream.on_message(3, bytes(later)), 1u) << "a replay from the last seq seen";
  EXPECT_EQ(kv_.gaps.load(), 1u);
  KvReplayResult replay{.complete = true};
  replay.batches = {{1, stored(1)}, {2, stored(2)}, {3, stored(3)}};
  EXPECT_EQ(stream.on_replay(replay), std::nullopt);
  EXPECT_EQ(held(4), 4u) << "what was missed while disconnected, and what was kept";
  EXPECT_EQ(stream.state(), KvStreamState::kLive);
}

TEST_F(KvStreamTest, AStreamThatRestartedWhileDisconnectedStartsOver) {
  KvStream stream = make(true);
  feed(stream, 7, 0);
  feed(stream, 8, 1);
  stream.disconnect();
  const std::string fresh = stored(5, /*first=*/true);
  EXPECT_EQ(stream.on_message(0, bytes(fresh)), std::nullopt) << "a new publisher: no replay";
  EXPECT_EQ(held(2), 0u);
  EXPECT_EQ(stream.restarts(), 1u);
  EXPECT_EQ(stream.state(), KvStreamState::kLive);
}

// An instance that leaves (its subscriber goes) and returns (a new one) keeps its index when its
// stream goes on where it was.
TEST_F(KvStreamTest, ANewStreamOverTheSameResidencyResumesFromItsLastSeq) {
  {
    KvStream gone = make(false);
    feed(gone, 20, 0);
    feed(gone, 21, 1);
    gone.disconnect();
  }
  EXPECT_EQ(kv_.last_seq.load(), 21u);
  KvStream back = make(false);
  EXPECT_EQ(back.last_seq(), 21u);
  feed(back, 22, 2);
  EXPECT_EQ(held(3), 3u) << "blocks 0 and 1 from before, 2 from now";
  EXPECT_EQ(kv_.gaps.load(), 0u);

  // Without a replay endpoint, a new stream that missed batches cannot be trusted: rebuilt.
  KvStream later = make(false);
  const std::string five = stored(5, /*first=*/true);
  EXPECT_EQ(later.on_message(30, bytes(five)), std::nullopt);
  EXPECT_EQ(kv_.gaps.load(), 1u);
  EXPECT_EQ(held(3), 0u);
  EXPECT_EQ(kv_.index.size(), 1u);
}

TEST_F(KvStreamTest, ANewGapAmongTheBufferedMessagesAsksForAnotherReplay) {
  KvStream stream = make(true);
  feed(stream, 0, 0);
  const std::string two = stored(2);
  ASSERT_EQ(stream.on_message(2, bytes(two)), 0u);
  const std::string three = stored(3);
  const std::string six = stored(6);
  EXPECT_EQ(stream.on_message(3, bytes(three)), std::nullopt);
  EXPECT_EQ(stream.on_message(6, bytes(six)), std::nullopt);
  KvReplayResult reply{.complete = true};
  reply.batches = {{0, stored(0)}, {1, stored(1)}, {2, stored(2)}};
  EXPECT_EQ(stream.on_replay(reply), 3u) << "6 after 3 is a gap of its own";
  EXPECT_EQ(stream.state(), KvStreamState::kGap);
  EXPECT_EQ(kv_.gaps.load(), 2u);
  KvReplayResult second{.complete = true};
  for (uint32_t seq = 3; seq <= 6; ++seq) second.batches.push_back({seq, stored(seq)});
  EXPECT_EQ(stream.on_replay(second), std::nullopt);
  EXPECT_EQ(stream.state(), KvStreamState::kLive);
  EXPECT_EQ(held(7), 7u);
}

}  // namespace
}  // namespace rolter
