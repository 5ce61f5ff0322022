#include "collect/kv_events/kv_stream.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "kv/kv_decode.h"

namespace rolter {

const char* kv_stream_state_name(KvStreamState state) {
  switch (state) {
    case KvStreamState::kDisconnected:
      return "disconnected";
    case KvStreamState::kLive:
      return "live";
    case KvStreamState::kStale:
      return "stale";
    case KvStreamState::kGap:
      return "gap";
  }
  return "unknown";
}

KvStream::KvStream(KvResidency& residency, const Clock& clock, KvStreamOptions options)
    : residency_(residency), clock_(clock), options_(std::move(options)) {
  if (const uint64_t seq = residency_.last_seq.load(std::memory_order_acquire);
      seq != KvResidency::kNoSeq) {
    last_seq_ = seq;  // what the index already reflects: a resumed stream goes on from there
  }
}

void KvStream::set_last_seq(std::optional<uint64_t> seq) {
  last_seq_ = seq;
  residency_.last_seq.store(seq.value_or(KvResidency::kNoSeq), std::memory_order_release);
}

std::optional<uint64_t> KvStream::on_message(uint64_t seq, std::span<const uint8_t> payload) {
  last_message_ = clock_.now();
  if (replay_from_) {
    pending_.push_back(Pending{seq, std::vector<uint8_t>(payload.begin(), payload.end())});
    return std::nullopt;
  }
  if (!last_seq_) {
    // What the index holds came from an earlier stream (before a reconnect or a config change)
    // and may miss removals since: this stream starts from nothing.
    residency_.index.clear();
  } else if (seq > *last_seq_ + 1) {
    residency_.gaps.fetch_add(1, std::memory_order_relaxed);
    if (options_.replay) {
      spdlog::warn("kv events: {}: gap after seq {} (got {}); asking for a replay", options_.name,
                   *last_seq_, seq);
      set_state(KvStreamState::kGap);
      replay_from_ = *last_seq_;
      pending_.push_back(Pending{seq, std::vector<uint8_t>(payload.begin(), payload.end())});
      return replay_from_;
    }
    spdlog::warn(
        "kv events: {}: gap after seq {} (got {}); no replay endpoint, rebuilding from "
        "live events",
        options_.name, *last_seq_, seq);
    residency_.index.clear();
  } else if (seq <= *last_seq_) {
    ++restarts_;
    spdlog::warn("kv events: {}: seq {} after {}: the publisher restarted; rebuilding",
                 options_.name, seq, *last_seq_);
    residency_.index.clear();
  }
  apply(seq, payload);
  set_state(KvStreamState::kLive);
  return std::nullopt;
}

void KvStream::on_malformed() { residency_.decode_errors.fetch_add(1, std::memory_order_relaxed); }

std::optional<uint64_t> KvStream::on_replay(const KvReplayResult& result) {
  const uint64_t from = *replay_from_;
  replay_from_.reset();
  const uint64_t gap_seq = pending_.front().seq;
  // The reply must start at `from` (the buffer reaches back past the gap), grow strictly, and go
  // at least as far as the batch before the gap message.
  std::string problem;
  if (!result.complete) problem = result.error.empty() ? "no end marker" : result.error;
  if (problem.empty() && (result.batches.empty() || result.batches.front().seq != from)) {
    problem = result.batches.empty() ? "the publisher's buffer is empty"
                                     : "the publisher's buffer starts at seq " +
                                           std::to_string(result.batches.front().seq) + ", after " +
                                           std::to_string(from);
  }
  for (size_t i = 1; problem.empty() && i < result.batches.size(); ++i) {
    if (result.batches[i].seq <= result.batches[i - 1].seq) problem = "seqs out of order";
  }
  if (problem.empty() && result.batches.back().seq + 1 < gap_seq) {
    problem = "the reply ends at seq " + std::to_string(result.batches.back().seq);
  }
  if (!problem.empty()) {
    ++replays_failed_;
    spdlog::warn("kv events: {}: replay from seq {} failed ({}); rebuilding from live events",
                 options_.name, from, problem);
    set_last_seq(std::nullopt);  // the gap message becomes the first of a new stream
    return drain_pending();
  }
  for (const KvReplayedBatch& batch : result.batches) {
    if (batch.seq <= from || batch.seq >= gap_seq) continue;
    apply(batch.seq,
          std::span(reinterpret_cast<const uint8_t*>(batch.payload.data()), batch.payload.size()));
  }
  spdlog::info("kv events: {}: gap repaired by replay (seq {} to {})", options_.name, from,
               gap_seq);
  // Every batch the publisher sent before the gap message is applied now; a seq it skipped is
  // none of ours.
  set_last_seq(gap_seq - 1);
  return drain_pending();
}

std::optional<uint64_t> KvStream::drain_pending() {
  std::vector<Pending> pending = std::move(pending_);
  pending_.clear();
  for (size_t i = 0; i < pending.size(); ++i) {
    if (replay_from_) {  // a new gap among them: the rest wait for its replay
      pending_.push_back(std::move(pending[i]));
      continue;
    }
    if (auto from = on_message(pending[i].seq, pending[i].payload)) {
      for (size_t j = i + 1; j < pending.size(); ++j) pending_.push_back(std::move(pending[j]));
      return from;
    }
  }
  return std::nullopt;
}

void KvStream::check_stale() {
  if (state() != KvStreamState::kLive) return;
  if (clock_.now() - last_message_ < options_.stale_after) return;
  spdlog::warn("kv events: {}: no message for {} s; stale", options_.name,
               std::chrono::duration_cast<std::chrono::seconds>(options_.stale_after).count());
  set_state(KvStreamState::kStale);
}

void KvStream::disconnect() {
  replay_from_.reset();
  pending_.clear();
  set_state(KvStreamState::kDisconnected);
}

void KvStream::apply(uint64_t seq, std::span<const uint8_t> payload) {
  set_last_seq(seq);
  auto decoded = decode_kv_batch(payload);
  if (!decoded) {
    // Logged once per run of bad payloads: a broken publisher would otherwise flood the log.
    if (!decoding_failed_) {
      spdlog::warn("kv events: {}: seq {}: undecodable payload skipped: {}", options_.name, seq,
                   decoded.error());
    }
    decoding_failed_ = true;
    residency_.decode_errors.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  decoding_failed_ = false;
  residency_.index.apply(decoded->batch, options_.block_size);
  residency_.events.fetch_add(decoded->batch.events.size(), std::memory_order_relaxed);
}

void KvStream::set_state(KvStreamState state) {
  const KvStreamState before = residency_.state.exchange(state, std::memory_order_acq_rel);
  if (before == state) return;
  if (state == KvStreamState::kLive) {
    spdlog::info("kv events: {}: live (was {})", options_.name, kv_stream_state_name(before));
  }
}

}  // namespace rolter
