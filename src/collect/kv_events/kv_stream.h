// KvStream: what one instance's KV-event stream means for its index (SPEC §6.8), decided from the
// messages' sequence numbers and the time; no I/O, so tests drive it with a ManualClock.
//
// Every message carries a seq that grows by one per batch. From the seq of each message and the
// last one seen:
//   first message        accepted whatever its seq (the subscriber joins a running stream): live.
//                        "First" means that nothing is known: the instance's KvResidency keeps
//                        the last seq its index reflects, so a stream that resumes after a
//                        reconnect, or after the instance left and returned (a new KvStream on
//                        the same residency), is judged by the rules below against that seq
//   seq == last + 1      in order: applied; live (also out of stale)
//   seq >  last + 1      a gap: counted. With a replay endpoint the state is kGap and the caller is
//                        asked to replay from `last` (see below); without one the index is cleared
//                        and rebuilt from live events, starting with this message: live at once,
//                        since what it then holds is all true, only incomplete
//   seq <= last          a new publisher: a PUB/SUB connection neither reorders nor repeats
//                        messages, so a seq that does not grow means the engine restarted (and its
//                        cache with it). The index is cleared and follows the new stream: live.
//                        Counted in restarts(), not as a gap.
// An undecodable payload is counted (decode_errors) and skipped; its seq still counts as seen, so
// the next message is not a gap. A message whose frames are malformed has no seq: counted as a
// decode error, nothing else changes.
// No message for stale_after: kStale; the next in-order message makes it live again.
//
// Replay. A gap is repaired by asking the publisher's replay socket for every batch it buffers
// with seq >= `last` (the last seq seen, not last + 1: the reply must then start with that very
// seq, which proves the buffer reaches back past the gap and holds every batch the publisher sent
// after it; a seq the publisher never sent is simply absent). On a complete reply starting at
// `last`, the replayed batches with last < seq < gap seq are applied in order, then the gap
// message and the live messages that arrived meanwhile. On a failed reply (timeout, no end
// marker, or a buffer that no longer reaches back to `last`) the index is cleared and rebuilt
// from the gap message on. While the replay is pending the state is kGap and picks are neutral.
// A seq missing inside a reply is taken as one the publisher never sent (the simulator's skip
// fault): a vLLM publisher sends every seq, and a ROUTER that drops replies at its high-water mark
// drops the tail of its burst, end marker included, which fails the replay instead.
//
// The stream writes the instance's KvResidency: its state, its index and its counters (events
// counts the decoded events applied, from live messages and replays).
//
// Thread-safety: one thread (the instance's subscriber) calls every method. The KvResidency it
// writes may be read from any thread.
//
//   KvStream stream(state->kv, clock, {.block_size = 16, .stale_after = 30s, .replay = true});
//   std::optional<uint64_t> from = stream.on_message(seq, payload);
//   while (from) from = stream.on_replay(ask_replay(*from));
//   stream.check_stale();  // every poll
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/clock.h"
#include "kv/kv_residency.h"

namespace rolter {

struct KvStreamOptions {
  uint32_t block_size = 16;
  Clock::Duration stale_after = std::chrono::seconds(30);
  bool replay = false;  // a replay endpoint exists
  std::string name;     // for the log: the instance's identity
};

// One batch as a replay socket answers it.
struct KvReplayedBatch {
  uint64_t seq = 0;
  std::string payload;
};

// What a replay request brought back.
struct KvReplayResult {
  std::vector<KvReplayedBatch> batches;  // in the order received
  bool complete = false;                 // the end marker arrived in time
  std::string error;                     // why not, when !complete (for the log)
};

class KvStream {
 public:
  // `residency` and `clock` must outlive the stream.
  KvStream(KvResidency& residency, const Clock& clock, KvStreamOptions options);

  // One well-formed live message. Returns the seq to request a replay from, when the message
  // reveals a gap that a replay can repair. The payload is copied only while a replay is pending.
  std::optional<uint64_t> on_message(uint64_t seq, std::span<const uint8_t> payload);
  // A live message whose frames were malformed (frame count, seq size): a decode error.
  void on_malformed();
  // The outcome of the replay requested last. Returns the seq to replay from again, in the rare
  // case that a live message buffered meanwhile reveals a new gap.
  // REQUIRES: replay_pending().
  std::optional<uint64_t> on_replay(const KvReplayResult& result);
  // Live -> stale when no message came for stale_after. Call on every poll.
  void check_stale();
  // The subscriber lost its socket (or stops): disconnected until the next message, which is
  // judged against the last seq seen (in order, a gap, or a restarted publisher).
  void disconnect();

  KvStreamState state() const { return residency_.state.load(std::memory_order_relaxed); }
  bool replay_pending() const { return replay_from_.has_value(); }
  std::optional<uint64_t> last_seq() const { return last_seq_; }
  uint64_t restarts() const { return restarts_; }
  uint64_t replays_failed() const { return replays_failed_; }

 private:
  struct Pending {
    uint64_t seq;
    std::vector<uint8_t> payload;
  };
  // Takes a message whose place in the stream is settled: decodes and applies it.
  void apply(uint64_t seq, std::span<const uint8_t> payload);
  void set_state(KvStreamState state);
  void start_over();  // clears the index and forgets the last seq
  // The last seq seen, here and in the residency (which outlives this stream).
  void set_last_seq(std::optional<uint64_t> seq);
  // Runs the messages buffered during a replay through on_message().
  std::optional<uint64_t> drain_pending();

  KvResidency& residency_;
  const Clock& clock_;
  KvStreamOptions options_;
  std::optional<uint64_t> last_seq_;
  Clock::TimePoint last_message_{};
  std::optional<uint64_t> replay_from_;  // a replay is pending from this seq
  std::vector<Pending> pending_;         // live messages received while it is, the gap's first
  uint64_t restarts_ = 0;
  uint64_t replays_failed_ = 0;
  bool decoding_failed_ = false;  // the last payload was undecodable (logged once per run)
};

// The name of a state, for the log ("live", "stale", ...).
const char* kv_stream_state_name(KvStreamState state);

}  // namespace rolter
