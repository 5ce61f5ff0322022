#include "collect/kv_events/kv_subscriber.h"

#include <spdlog/spdlog.h>
#include <zmq.hpp>

#include <span>
#include <utility>
#include <vector>

#include "collect/kv_events/kv_stream.h"

namespace rolter {
namespace {

// vLLM's end-of-replay marker: seq -1 as a signed 64-bit big-endian integer.
constexpr uint64_t kEndSeq = ~uint64_t{0};
// Messages read per poll before staleness and stop are looked at again: a burst of a busy engine
// is read in one go, yet a flood cannot hold stop() off.
constexpr int kMaxMessagesPerPoll = 1000;

std::string seq_bytes(uint64_t seq) {
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i) {
    out[static_cast<size_t>(i)] = static_cast<char>(seq & 0xff);
    seq >>= 8;
  }
  return out;
}

uint64_t read_seq(const zmq::message_t& frame) {
  uint64_t seq = 0;
  const auto* bytes = static_cast<const uint8_t*>(frame.data());
  for (size_t i = 0; i < 8; ++i) seq = (seq << 8) | bytes[i];
  return seq;
}

std::span<const uint8_t> bytes_of(const zmq::message_t& frame) {
  return {static_cast<const uint8_t*>(frame.data()), frame.size()};
}

// Reads one whole multipart message without waiting. False when none is queued.
bool recv_message(zmq::socket_t& socket, std::vector<zmq::message_t>& frames) {
  frames.clear();
  for (;;) {
    zmq::message_t frame;
    const auto flags = frames.empty() ? zmq::recv_flags::dontwait : zmq::recv_flags::none;
    if (!socket.recv(frame, flags)) return !frames.empty();
    const bool more = frame.more();
    frames.push_back(std::move(frame));
    if (!more) return true;
  }
}

}  // namespace

KvSubscriber::KvSubscriber(zmq::context_t& context, KvResidency& residency, const Clock& clock,
                           KvSubscriberOptions options)
    : context_(context), residency_(residency), clock_(clock), options_(std::move(options)) {}

KvSubscriber::~KvSubscriber() { stop(); }

void KvSubscriber::start() {
  stop_ = false;
  thread_ = std::thread([this] { run(); });
}

void KvSubscriber::stop() {
  if (!thread_.joinable()) return;
  stop_ = true;
  thread_.join();
}

namespace {

// One replay request through a fresh DEALER, read until the end marker or the deadline.
KvReplayResult ask_replay(zmq::context_t& context, const KvSubscriberOptions& options,
                          uint64_t from, const std::atomic<bool>& stop) {
  KvReplayResult result;
  try {
    zmq::socket_t dealer(context, zmq::socket_type::dealer);
    dealer.set(zmq::sockopt::linger, 0);
    // A whole replay buffer (vLLM keeps 10,000 batches) may come at once; a ROUTER drops what a
    // full pipe cannot take, so this side takes everything.
    dealer.set(zmq::sockopt::rcvhwm, 0);
    dealer.connect(options.replay_endpoint);
    // The empty delimiter makes the ROUTER answer as it answers a REQ, as vLLM's does.
    dealer.send(zmq::message_t(), zmq::send_flags::sndmore);
    dealer.send(zmq::buffer(seq_bytes(from)), zmq::send_flags::none);
    const auto deadline = std::chrono::steady_clock::now() + options.replay_timeout;
    std::vector<zmq::message_t> frames;
    while (!stop) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        result.error =
            "no end marker within " + std::to_string(options.replay_timeout.count()) + " ms";
        return result;
      }
      zmq::pollitem_t item{dealer.handle(), 0, ZMQ_POLLIN, 0};
      if (zmq::poll(&item, 1, std::min(left, options.poll)) == 0) continue;
      while (recv_message(dealer, frames)) {
        // [empty, seq, payload]; a ROUTER that drops the delimiter sends [seq, payload].
        const size_t first = frames.size() == 3 && frames[0].size() == 0 ? 1 : 0;
        if (frames.size() - first != 2 || frames[first].size() != 8) {
          result.error = "a malformed reply";
          return result;
        }
        const uint64_t seq = read_seq(frames[first]);
        if (seq == kEndSeq) {
          result.complete = true;
          return result;
        }
        result.batches.push_back(KvReplayedBatch{seq, frames[first + 1].to_string()});
      }
    }
    result.error = "stopping";
  } catch (const zmq::error_t& e) {
    result.error = e.what();
  }
  return result;
}

}  // namespace

void KvSubscriber::run() {
  KvStream stream(residency_, clock_,
                  KvStreamOptions{.block_size = options_.block_size,
                                  .stale_after = options_.stale_after,
                                  .replay = !options_.replay_endpoint.empty(),
                                  .name = options_.name});
  stream.disconnect();  // until the first message
  std::optional<zmq::socket_t> sub;
  try {
    sub.emplace(context_, zmq::socket_type::sub);
    sub->set(zmq::sockopt::linger, 0);
    sub->set(zmq::sockopt::subscribe, options_.topic);
    sub->connect(options_.endpoint);
  } catch (const zmq::error_t& e) {
    spdlog::error("kv events: {}: cannot subscribe to {}: {}", options_.name, options_.endpoint,
                  e.what());
    return;
  }
  spdlog::info(
      "kv events: {}: subscribed to {}{}", options_.name, options_.endpoint,
      options_.replay_endpoint.empty() ? "" : " (replay " + options_.replay_endpoint + ")");
  std::vector<zmq::message_t> frames;
  while (!stop_) {
    try {
      zmq::pollitem_t item{sub->handle(), 0, ZMQ_POLLIN, 0};
      if (zmq::poll(&item, 1, options_.poll) > 0) {
        for (int n = 0; n < kMaxMessagesPerPoll && !stop_ && recv_message(*sub, frames); ++n) {
          if (frames.size() != 3 || frames[1].size() != 8) {
            stream.on_malformed();
            continue;
          }
          auto from = stream.on_message(read_seq(frames[1]), bytes_of(frames[2]));
          while (from) from = stream.on_replay(ask_replay(context_, options_, *from, stop_));
        }
      }
    } catch (const zmq::error_t& e) {
      // Only a context being terminated or a broken socket get here: nothing left to read.
      spdlog::error("kv events: {}: {}", options_.name, e.what());
      break;
    }
    stream.check_stale();
  }
  stream.disconnect();
}

}  // namespace rolter
