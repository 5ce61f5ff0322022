// KvSubscriber: one instance's vLLM KV-event stream, read over ZeroMQ on a thread of its own
// (SPEC §6.8), never on a worker.
//
// A SUB socket connects to `endpoint` and subscribes to `topic`; each message is 3 frames
// [topic, seq (8-byte big-endian), payload], handed to a KvStream (kv_stream.h) that decides what
// it means for the instance's KvResidency. A message of another shape counts as a decode error.
// The socket is polled every `poll` so that stop() and staleness are noticed; ZeroMQ reconnects by
// itself, and the state stays kDisconnected until the first message arrives.
//
// When the stream asks for a replay, the thread asks the publisher's ROUTER `replay_endpoint`
// through a fresh DEALER: [empty delimiter, start_seq (8-byte big-endian)], then reads
// [empty, seq, payload] replies until seq 0xFFFFFFFFFFFFFFFF, all within `replay_timeout`. Live
// messages that arrive meanwhile queue in the SUB socket and follow the replay. The DEALER is
// closed after each replay, so a late reply to a timed-out request cannot be mistaken for the
// next one.
//
// No exception leaves the thread: cppzmq's errors become a log line and a state.
//
// Thread-safety: start() and stop() from one thread (the owner's). The thread writes only the
// KvResidency, whose members are safe to read from any thread.
//
//   KvSubscriber sub(context, state->kv, clock, {.endpoint = "tcp://127.0.0.1:5557"});
//   sub.start();
//   ...
//   sub.stop();  // state kDisconnected
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "common/clock.h"
#include "kv/kv_residency.h"

namespace zmq {
class context_t;
}  // namespace zmq

namespace rolter {

struct KvSubscriberOptions {
  std::string endpoint;         // e.g. "tcp://127.0.0.1:5557"
  std::string replay_endpoint;  // empty: no replay; a gap clears the index
  std::string topic;            // vLLM's default is empty (every message)
  uint32_t block_size = 16;
  Clock::Duration stale_after = std::chrono::seconds(30);
  // vLLM answers a replay from memory in milliseconds; a second means it will not answer.
  std::chrono::milliseconds replay_timeout{1000};
  // How long one poll waits: the bound on noticing stop() or staleness.
  std::chrono::milliseconds poll{100};
  std::string name;  // the instance's identity, for the log
};

class KvSubscriber {
 public:
  // `context`, `residency` and `clock` must outlive the subscriber.
  KvSubscriber(zmq::context_t& context, KvResidency& residency, const Clock& clock,
               KvSubscriberOptions options);
  ~KvSubscriber();
  KvSubscriber(const KvSubscriber&) = delete;
  KvSubscriber& operator=(const KvSubscriber&) = delete;

  const KvSubscriberOptions& options() const { return options_; }

  // Starts the thread.
  void start();
  // Stops and joins the thread (within one poll); the state becomes kDisconnected. Idempotent.
  void stop();

 private:
  void run();

  zmq::context_t& context_;
  KvResidency& residency_;
  const Clock& clock_;
  const KvSubscriberOptions options_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace rolter
