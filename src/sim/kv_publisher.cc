#include "sim/kv_publisher.h"

#include <nlohmann/json.hpp>
#include <zmq.hpp>

namespace rolter::sim {
namespace {

using Json = nlohmann::json;

// vLLM's end-of-replay marker: seq -1 as a signed 64-bit big-endian integer.
constexpr uint64_t kEndSeq = ~uint64_t{0};
// How often the replay thread looks at its stop flag while idle.
constexpr std::chrono::milliseconds kReplayPoll{100};
// What the garbage fault sends: a msgpack "never used" byte (0xc1) followed by text.
constexpr std::string_view kGarbage = "\xc1 not msgpack";

std::string seq_bytes(uint64_t seq) {
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i) {
    out[static_cast<size_t>(i)] = static_cast<char>(seq & 0xff);
    seq >>= 8;
  }
  return out;
}

Json hashes_json(const std::vector<uint64_t>& hashes) {
  Json out = Json::array();
  for (uint64_t h : hashes) out.push_back(h);
  return out;
}

Json event_json(const KvEvent& e, KvFormat format) {
  const bool array = format == KvFormat::kArray;
  switch (e.kind) {
    case KvEvent::Kind::kBlockStored: {
      Json parent = e.parent_block_hash ? Json(*e.parent_block_hash) : Json(nullptr);
      Json tokens = Json::array();
      for (uint32_t t : e.token_ids) tokens.push_back(t);
      Json lora_name = e.lora_name.empty() ? Json(nullptr) : Json(e.lora_name);
      if (array) {
        return Json::array({"BlockStored", hashes_json(e.block_hashes), parent, tokens,
                            e.block_size, nullptr, "GPU", lora_name});
      }
      return Json{{"type", "BlockStored"},
                  {"block_hashes", hashes_json(e.block_hashes)},
                  {"parent_block_hash", parent},
                  {"token_ids", tokens},
                  {"block_size", e.block_size},
                  {"lora_id", nullptr},
                  {"medium", "GPU"},
                  {"lora_name", lora_name}};
    }
    case KvEvent::Kind::kBlockRemoved:
      if (array) return Json::array({"BlockRemoved", hashes_json(e.block_hashes), "GPU"});
      return Json{{"type", "BlockRemoved"},
                  {"block_hashes", hashes_json(e.block_hashes)},
                  {"medium", "GPU"}};
    case KvEvent::Kind::kAllBlocksCleared:
      if (array) return Json::array({"AllBlocksCleared"});
      return Json{{"type", "AllBlocksCleared"}};
  }
  return nullptr;
}

uint16_t bound_port(zmq::socket_t& socket) {
  const std::string endpoint = socket.get(zmq::sockopt::last_endpoint);
  return static_cast<uint16_t>(std::stoul(endpoint.substr(endpoint.rfind(':') + 1)));
}

std::string tcp_address(const std::string& host, uint16_t port) {
  return "tcp://" + host + ":" + (port == 0 ? std::string("*") : std::to_string(port));
}

}  // namespace

std::string encode_kv_batch(double ts_seconds, std::span<const KvEvent> events, KvFormat format) {
  Json list = Json::array();
  for (const KvEvent& e : events) list.push_back(event_json(e, format));
  Json batch =
      format == KvFormat::kArray
          ? Json::array({ts_seconds, std::move(list), 0})
          : Json{{"ts", ts_seconds}, {"events", std::move(list)}, {"data_parallel_rank", 0}};
  std::vector<uint8_t> bytes = Json::to_msgpack(batch);
  return std::string(bytes.begin(), bytes.end());
}

KvEventPublisher::KvEventPublisher(zmq::context_t& context, const KvPublisherOptions& options)
    : options_(options) {
  pub_ = std::make_unique<zmq::socket_t>(context, zmq::socket_type::pub);
  pub_->set(zmq::sockopt::linger, 0);
  if (options_.replay) {
    router_ = std::make_unique<zmq::socket_t>(context, zmq::socket_type::router);
    router_->set(zmq::sockopt::linger, 0);
  }
}

tl::expected<std::unique_ptr<KvEventPublisher>, std::string> KvEventPublisher::create(
    zmq::context_t& context, const KvPublisherOptions& options) {
  std::unique_ptr<KvEventPublisher> p(new KvEventPublisher(context, options));
  const std::string pub_address = tcp_address(options.host, options.port);
  try {
    p->pub_->bind(pub_address);
    p->port_ = bound_port(*p->pub_);
  } catch (const zmq::error_t& e) {
    return tl::make_unexpected("cannot bind KV event socket " + pub_address + ": " + e.what());
  }
  if (p->router_) {
    const std::string replay_address = tcp_address(options.host, options.replay_port);
    try {
      p->router_->bind(replay_address);
      p->replay_port_ = bound_port(*p->router_);
    } catch (const zmq::error_t& e) {
      return tl::make_unexpected("cannot bind KV replay socket " + replay_address + ": " +
                                 e.what());
    }
    KvEventPublisher* raw = p.get();
    p->replay_thread_ = std::thread([raw] { raw->serve_replay(); });
  }
  return p;
}

KvEventPublisher::~KvEventPublisher() {
  stop_ = true;
  if (replay_thread_.joinable()) replay_thread_.join();
}

void KvEventPublisher::publish(double ts_seconds, std::span<const KvEvent> events,
                               KvFaults& faults) {
  if (faults.skip_seq) {
    faults.skip_seq = false;
    ++next_seq_;
  }
  std::string payload;
  if (faults.garbage) {
    faults.garbage = false;
    payload.assign(kGarbage);
  } else {
    payload = encode_kv_batch(ts_seconds, events, options_.format);
  }
  const uint64_t seq = next_seq_++;
  if (router_) {
    MutexLock lock(mu_);
    buffer_.emplace_back(seq, payload);
    while (buffer_.size() > options_.replay_buffer) buffer_.pop_front();
  }
  if (faults.silent) return;
  const std::string seq_frame = seq_bytes(seq);
  // PUB never blocks: a slow subscriber past its high-water mark loses messages, as with vLLM.
  pub_->send(zmq::buffer(options_.topic), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
  pub_->send(zmq::buffer(seq_frame), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
  pub_->send(zmq::buffer(payload), zmq::send_flags::dontwait);
}

void KvEventPublisher::serve_replay() {
  while (!stop_) {
    zmq::pollitem_t item{router_->handle(), 0, ZMQ_POLLIN, 0};
    try {
      if (zmq::poll(&item, 1, kReplayPoll) == 0) continue;
      std::vector<zmq::message_t> frames;
      for (;;) {
        zmq::message_t frame;
        if (!router_->recv(frame, zmq::recv_flags::dontwait)) break;
        const bool more = frame.more();
        frames.push_back(std::move(frame));
        if (!more) break;
      }
      // [identity, "", start_seq] from REQ (or a DEALER with a delimiter); [identity, start_seq]
      // from a bare DEALER. Anything else is not a replay request and is ignored.
      const bool delimited = frames.size() == 3 && frames[1].size() == 0;
      if (!delimited && frames.size() != 2) continue;
      const zmq::message_t& start_frame = frames.back();
      if (start_frame.size() != 8) continue;
      uint64_t start_seq = 0;
      for (size_t i = 0; i < 8; ++i) {
        start_seq = (start_seq << 8) | static_cast<const uint8_t*>(start_frame.data())[i];
      }
      const std::string identity = frames.front().to_string();
      std::vector<std::pair<uint64_t, std::string>> replies;
      {
        MutexLock lock(mu_);
        for (const auto& entry : buffer_) {
          if (entry.first >= start_seq) replies.push_back(entry);
        }
      }
      replies.emplace_back(kEndSeq, std::string());
      for (const auto& [seq, payload] : replies) {
        const std::string seq_frame = seq_bytes(seq);
        router_->send(zmq::buffer(identity), zmq::send_flags::sndmore);
        if (delimited) router_->send(zmq::message_t(), zmq::send_flags::sndmore);
        router_->send(zmq::buffer(seq_frame), zmq::send_flags::sndmore);
        router_->send(zmq::buffer(payload), zmq::send_flags::none);
      }
    } catch (const zmq::error_t&) {
      // The context is shutting down, or the peer vanished mid-reply: nothing to answer.
      if (stop_) return;
    }
  }
}

}  // namespace rolter::sim
