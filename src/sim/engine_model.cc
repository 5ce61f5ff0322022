#include "sim/engine_model.h"

#include <algorithm>

namespace rolter::sim {

EngineModel::EngineModel(EngineModelParams params, KvEventSink* sink)
    : params_(params),
      cache_({.kv_blocks = params.kv_blocks, .block_size = params.block_size}, sink) {
  // A batch of zero would never admit anything; negative costs would run time backwards.
  params_.max_batch = std::max<size_t>(1, params_.max_batch);
  params_.kv_blocks = cache_.params().kv_blocks;
  params_.block_size = cache_.params().block_size;
  for (double* ms : {&params_.prefill_ms_base, &params_.prefill_ms_per_token,
                     &params_.decode_ms_base, &params_.decode_ms_per_seq, &params_.lora_load_ms,
                     &params_.time_scale, &params_.kv_transfer_ms_per_block}) {
    *ms = std::max(0.0, *ms);
  }
}

void EngineModel::submit(double now_ms, ModelRequest request) {
  run_until(now_ms);
  Sequence seq;
  seq.request = std::move(request);
  seq.arrival_ms = now_ms;
  waiting_.push_back(std::move(seq));
  admit_waiting(now_ms);
}

bool EngineModel::cancel(double now_ms, uint64_t id) {
  run_until(now_ms);
  auto queued = std::find_if(waiting_.begin(), waiting_.end(),
                             [id](const Sequence& s) { return s.request.id == id; });
  if (queued != waiting_.end()) {
    waiting_.erase(queued);
    // The head may have been blocking others only by being first; nothing else changes, but a
    // removed head lets the next one try.
    admit_waiting(now_ms);
    return true;
  }
  if (release_held(now_ms, id)) return true;
  auto it = running_.find(id);
  if (it == running_.end()) return false;
  const Sequence& seq = it->second;
  // Aborted mid-prefill as the last one scheduled: the compute it has not used is free again.
  if (!seq.prefilled && !seq.request.kv_from_remote && params_.prefill_chunk_tokens == 0 &&
      seq.next_ms == prefill_free_ms_) {
    prefill_free_ms_ = std::max(now_ms, seq.prefill_start_ms);
  }
  due_.erase({it->second.next_ms, it->second.order});
  finish(id);
  admit_waiting(now_ms);
  return true;
}

std::optional<double> EngineModel::next_event_ms() const {
  if (!ready_.empty()) return clock_ms_;
  if (due_.empty()) return std::nullopt;
  return due_.begin()->first.first;
}

void EngineModel::advance(double now_ms, std::vector<ModelEvent>& out) {
  run_until(now_ms);
  out.insert(out.end(), std::make_move_iterator(ready_.begin()),
             std::make_move_iterator(ready_.end()));
  ready_.clear();
}

double EngineModel::cache_usage() const {
  return static_cast<double>(cache_.referenced_blocks()) / static_cast<double>(params_.kv_blocks);
}

double EngineModel::occupancy() const {
  return static_cast<double>(cache_.resident_blocks()) / static_cast<double>(params_.kv_blocks);
}

std::optional<EngineModel::HeldBlocks> EngineModel::held_block_ids(uint64_t id) const {
  auto it = held_.find(id);
  if (it == held_.end()) return std::nullopt;
  // Referenced blocks are never evicted, so every held block is resident.
  auto ids = cache_.block_ids(it->second.hashes);
  if (!ids) return std::nullopt;
  return HeldBlocks{.ids = std::move(*ids), .hashes = it->second.hashes};
}

bool EngineModel::release_held(double now_ms, uint64_t id) {
  auto it = held_.find(id);
  if (it == held_.end()) return false;
  run_until(now_ms);
  cache_.release(it->second);
  held_.erase(it);
  admit_waiting(now_ms);
  return true;
}

void EngineModel::reset_prefix_cache(double now_ms) {
  run_until(now_ms);
  cache_.clear(now_ms);
}

void EngineModel::run_until(double now_ms) {
  while (!due_.empty() && due_.begin()->first.first <= now_ms) {
    auto node = due_.extract(due_.begin());
    const double at = node.key().first;
    const uint64_t id = node.mapped();
    clock_ms_ = std::max(clock_ms_, at);
    Sequence& seq = running_.at(id);
    const size_t wanted = seq.request.output_tokens;
    ModelEvent event;
    event.id = id;
    event.at_ms = at;
    event.cached_tokens = seq.cached_tokens;
    event.prompt_tokens = seq.request.tokens.size();
    event.queued_ms = seq.admitted_ms - seq.arrival_ms;
    event.lora_miss = seq.lora_miss;
    event.pulled_blocks = seq.pulled_blocks;
    if (!seq.prefilled) {
      seq.prefilled = true;
      seq.emitted = std::min<size_t>(1, wanted);
      event.kind = ModelEvent::Kind::kFirstToken;
      event.tokens_emitted = seq.emitted;
      ready_.push_back(event);
    } else {
      ++seq.emitted;
      event.kind = ModelEvent::Kind::kToken;
      event.tokens_emitted = seq.emitted;
      if (params_.token_events) ready_.push_back(event);
    }
    if (seq.emitted >= wanted) {
      event.kind = ModelEvent::Kind::kFinished;
      ready_.push_back(event);
      finish(id, seq.request.hold_kv);
      admit_waiting(at);
      continue;
    }
    // The batch size now (this sequence included) sets the pace of its next token.
    seq.next_ms = at + scaled(decode_interval_ms(at));
    due_.emplace(std::make_pair(seq.next_ms, seq.order), id);
  }
  clock_ms_ = std::max(clock_ms_, now_ms);
}

double EngineModel::decode_interval_ms(double at) {
  double interval =
      params_.decode_ms_base + params_.decode_ms_per_seq * static_cast<double>(running_.size());
  if (params_.prefill_chunk_tokens > 0) {
    const double chunk =
        std::min(static_cast<double>(params_.prefill_chunk_tokens), prefill_tokens_left(at));
    interval += chunk * params_.prefill_ms_per_token;
  }
  return interval;
}

double EngineModel::prefill_tokens_left(double at) {
  while (!prefills_.empty() && prefills_.front().end_ms <= at) prefills_.pop_front();
  double left = 0;
  for (const Prefill& p : prefills_) {
    // A running prefill computes its tokens evenly over its time.
    left += p.start_ms >= at ? p.tokens : p.tokens * (p.end_ms - at) / (p.end_ms - p.start_ms);
  }
  return left;
}

void EngineModel::admit_waiting(double now_ms) {
  while (!waiting_.empty() && running_.size() < params_.max_batch) {
    Sequence& head = waiting_.front();
    const std::vector<uint64_t> hashes =
        cache_.chain_hashes(head.request.tokens, head.request.adapter);
    const size_t absent = static_cast<size_t>(std::count_if(
        hashes.begin(), hashes.end(), [this](uint64_t h) { return !cache_.contains(h); }));
    auto ticket = cache_.acquire(now_ms, hashes, head.request.tokens, head.request.adapter);
    // First come, first served: a head that does not fit holds back everything behind it.
    if (!ticket) break;
    Sequence seq = std::move(head);
    waiting_.pop_front();
    seq.ticket = std::move(*ticket);
    seq.admitted_ms = now_ms;
    seq.order = next_order_++;
    seq.cached_tokens = seq.ticket.hit_blocks * params_.block_size;
    const size_t prompt = seq.request.tokens.size();
    prefix_query_tokens_ += prompt;
    prefix_hit_tokens_ += seq.cached_tokens;
    seq.lora_miss = touch_adapter(seq.request.adapter);
    const double load = seq.lora_miss ? params_.lora_load_ms : 0.0;
    const uint64_t id = seq.request.id;
    if (seq.request.kv_from_remote) {
      // Pulled, not computed: off the prefill pipeline, so nothing queues behind it.
      seq.pulled_blocks = absent;
      kv_blocks_pulled_ += absent;
      seq.next_ms = now_ms + scaled(load) +
                    scaled(params_.kv_transfer_ms_per_block * static_cast<double>(absent));
      due_.emplace(std::make_pair(seq.next_ms, seq.order), id);
      running_.emplace(id, std::move(seq));
      continue;
    }
    prefill_computed_tokens_ += prompt - seq.cached_tokens;
    const double prefill =
        params_.prefill_ms_base +
        params_.prefill_ms_per_token * static_cast<double>(prompt - seq.cached_tokens);
    const double prefill_start = std::max(now_ms + scaled(load), prefill_free_ms_);
    seq.prefill_start_ms = prefill_start;
    seq.next_ms = prefill_start + scaled(prefill);
    prefill_free_ms_ = seq.next_ms;
    if (params_.prefill_chunk_tokens > 0) {
      prefills_.push_back({.start_ms = prefill_start,
                           .end_ms = seq.next_ms,
                           .tokens = static_cast<double>(prompt - seq.cached_tokens)});
    }
    due_.emplace(std::make_pair(seq.next_ms, seq.order), id);
    running_.emplace(id, std::move(seq));
  }
}

bool EngineModel::touch_adapter(const std::string& adapter) {
  if (adapter.empty()) return false;
  auto it = std::find(adapters_.begin(), adapters_.end(), adapter);
  if (it != adapters_.end()) {
    adapters_.splice(adapters_.begin(), adapters_, it);
    return false;
  }
  adapters_.push_front(adapter);
  if (adapters_.size() > params_.max_loras) adapters_.pop_back();
  ++lora_misses_;
  return true;
}

void EngineModel::finish(uint64_t id, bool hold) {
  auto it = running_.find(id);
  if (it == running_.end()) return;
  if (hold) {
    held_[id] = std::move(it->second.ticket);
  } else {
    cache_.release(it->second.ticket);
  }
  running_.erase(it);
}

}  // namespace rolter::sim
