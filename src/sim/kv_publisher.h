// KvEventPublisher: publishes one engine's KV events over ZeroMQ in vLLM's wire format
// (SPEC section 6.8), with an optional replay socket.
//
// PUB socket, one 3-frame message per batch: [topic, seq as 8-byte big-endian uint64, payload].
// seq starts at 0 and grows by one per batch (gap-free unless the skip fault is on). The payload
// is msgpack, in one of vLLM's two encodings:
//   array: [ts, [event...], dp_rank] with events
//          ["BlockStored", block_hashes, parent_block_hash|nil, token_ids, block_size,
//           lora_id (nil), medium ("GPU"), lora_name|nil], ["BlockRemoved", block_hashes, medium],
//          ["AllBlocksCleared"]
//   map:   {"ts":..., "events":[{"type":"BlockStored","block_hashes":[...], ...}],
//           "data_parallel_rank":0}, with the same field names as the array positions.
// ts is unix seconds (a float); block hashes are unsigned 64-bit integers.
//
// Replay (optional ROUTER socket), laid out as vLLM's publisher does: a request arrives as
// [identity, "", start_seq (8-byte big-endian)] (a REQ client, or a DEALER that sends an empty
// delimiter frame first); for every buffered batch with seq >= start_seq the reply is
// [identity, "", seq, payload], then the end marker [identity, "", 0xFFFFFFFFFFFFFFFF, ""].
// A request without the empty delimiter ([identity, start_seq], a bare DEALER) is answered
// without it too. The buffer keeps the last `replay_buffer` batches.
//
// Faults (see KvFaults): skip a seq, replace a payload by garbage, or go silent (batches keep
// their seq and stay in the replay buffer but are not sent, so a subscriber sees a gap when the
// publisher speaks again and can repair it by replay).
//
// Thread-safety: publish() is called by the engine's owner, one call at a time (any thread, as
// long as calls are serialised). The replay socket is served by the publisher's own thread; the
// buffer they share is guarded by a mutex.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <tl/expected.hpp>
#include <utility>

#include "common/mutex.h"
#include "sim/kv_cache.h"

namespace zmq {
class context_t;
class socket_t;
}  // namespace zmq

namespace rolter::sim {

enum class KvFormat { kArray, kMap };

struct KvPublisherOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0 = ephemeral
  bool replay = false;
  uint16_t replay_port = 0;  // 0 = ephemeral
  KvFormat format = KvFormat::kArray;
  std::string topic;  // vLLM's default topic is empty
  // vLLM keeps 10,000 batches for replay by default.
  size_t replay_buffer = 10000;
};

// The publishing faults, as the engine's Faults carry them.
struct KvFaults {
  bool skip_seq = false;  // leave one seq number out before the next batch
  bool garbage = false;   // send the next batch's payload as bytes that are not msgpack
  bool silent = false;    // send nothing while set
};

// Encodes one batch of events as the msgpack payload (exposed for tests and benchmarks).
std::string encode_kv_batch(double ts_seconds, std::span<const KvEvent> events, KvFormat format);

class KvEventPublisher {
 public:
  // Binds the sockets; the error says which address could not be bound.
  static tl::expected<std::unique_ptr<KvEventPublisher>, std::string> create(
      zmq::context_t& context, const KvPublisherOptions& options);
  ~KvEventPublisher();
  KvEventPublisher(const KvEventPublisher&) = delete;
  KvEventPublisher& operator=(const KvEventPublisher&) = delete;

  uint16_t port() const { return port_; }
  uint16_t replay_port() const { return replay_port_; }  // 0 without replay

  // Publishes one batch at unix time `ts_seconds`. One-shot faults (skip_seq, garbage) are
  // cleared in `faults` once applied.
  void publish(double ts_seconds, std::span<const KvEvent> events, KvFaults& faults);

  // The seq the next batch will carry.
  uint64_t next_seq() const { return next_seq_; }

 private:
  KvEventPublisher(zmq::context_t& context, const KvPublisherOptions& options);
  void serve_replay();

  KvPublisherOptions options_;
  std::unique_ptr<zmq::socket_t> pub_;
  std::unique_ptr<zmq::socket_t> router_;
  uint16_t port_ = 0;
  uint16_t replay_port_ = 0;
  uint64_t next_seq_ = 0;

  Mutex mu_;
  std::deque<std::pair<uint64_t, std::string>> buffer_ GUARDED_BY(mu_);
  std::atomic<bool> stop_{false};
  std::thread replay_thread_;
};

}  // namespace rolter::sim
