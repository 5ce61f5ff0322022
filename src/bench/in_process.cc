#include "bench/in_process.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <memory>
#include <vector>

#include "balance/adaptive/adaptive_policy.h"
#include "balance/adaptive/adaptive_route_state.h"
#include "balance/balancer_factory.h"
#include "balance/evidence/instance_evidence.h"
#include "balance/kv_match.h"
#include "balance/lmcache_signal.h"
#include "balance/policy/policy_settings.h"
#include "balance/split_decider.h"
#include "bench/block_text.h"
#include "bench/progress.h"
#include "common/clock.h"
#include "common/hash.h"
#include "common/random.h"
#include "kv/kv_decode.h"
#include "kv/kv_residency.h"
#include "sim/kv_publisher.h"

namespace rolter::bench {
namespace {

struct EngineEvent {
  size_t engine;
  sim::ModelEvent event;
};

// Per request: when it arrived and where it went, indexed by request id (its trace position).
struct InFlight {
  double arrival_ms = 0;
  double last_token_ms = 0;  // the answer's latest token, for ITL
  uint32_t output_tokens = 0;
  uint32_t engine = 0;        // of the current step
  bool prefill_step = false;  // the current step is a split request's prefill
  bool remote_kv = false;     // the current step pulls its KV (a split request's decode step)
  uint32_t queue_depth = 0;   // the engine's load before this request joined it
  double queued_prefill_ktokens = 0;  // and its queued prefill (LoadSignals::prefill_tokens)
  double prompt_ktokens = 0;
  double uncached_ktokens = 0;  // what the engine's KV index did not hold at the pick
  uint64_t prefill_tokens = 0;  // the same, counted in the engine's queued prefill until served
};

// One engine's KV events on their way to the gateway: each batch encoded as the simulator's
// publisher sends it, and delivered to the engine's KV index `delay_ms` after it happened.
class KvFeed final : public sim::KvEventSink {
 public:
  KvFeed(KvResidency& kv, double delay_ms) : kv_(kv), delay_ms_(delay_ms) {}

  void on_kv_events(double at_ms, std::span<const sim::KvEvent> events) override {
    pending_.push_back(
        {at_ms + delay_ms_, sim::encode_kv_batch(at_ms / 1000, events, sim::KvFormat::kArray)});
  }

  // Applies every batch due by `now_ms`, in order. Returns the number that failed to decode.
  size_t deliver_until(double now_ms) {
    size_t errors = 0;
    while (!pending_.empty() && pending_.front().due_ms <= now_ms) {
      const std::string& payload = pending_.front().payload;
      auto decoded = decode_kv_batch(
          std::span(reinterpret_cast<const uint8_t*>(payload.data()), payload.size()));
      if (decoded) {
        kv_.index.apply(decoded->batch, kv_.block_size.load(std::memory_order_relaxed));
      } else {
        ++errors;
      }
      pending_.pop_front();
    }
    return errors;
  }

 private:
  struct Batch {
    double due_ms;
    std::string payload;
  };
  KvResidency& kv_;
  double delay_ms_;
  std::deque<Batch> pending_;
};

// adaptive replays under its default policy, switched on: disabled, it is the pipeline stack.
const AdaptivePolicy kReplayedAdaptivePolicy{.enabled = true};
// policy replays with its built-in plugins (SPEC §7), equally weighted; there is no decision
// service to ask, and the traces carry no session keys, so session affinity only breaks ties.
const PolicySettings kReplayedPolicy{.least_inflight_weight = 1.0, .session_affinity_weight = 1.0};
// lmcache_aware reads each engine's occupancy as the LMCache poller would leave it: refreshed
// once a second (virtual time), the poller's default interval.
constexpr double kLmcachePollMs = 1000;

class Replay {
 public:
  Replay(std::span<const TraceRequest> trace, const InProcessOptions& o)
      : trace_(trace),
        options_(o),
        prefill_engines_(o.pd ? o.pd->prefill : 0),
        rng_(o.seed),
        kv_(std::make_unique<KvResidency[]>(o.engines)),
        lmcache_(std::make_unique<LmcacheSignal[]>(o.engines)),
        counters_(std::make_unique<LoadSignals[]>(o.engines)),
        evidence_(std::make_unique<InstanceEvidence[]>(o.engines)),
        requests_(trace.size()) {
    samples_.assigned = WindowedImbalance(o.engines - prefill_engines_);
    sim::EngineModelParams params = o.model;
    params.block_size = o.block_size;
    params.kv_blocks = o.kv_tokens_per_engine / o.block_size;
    // ITL needs every token's time.
    params.token_events = true;
    for (size_t i = 0; i < o.engines; ++i) {
      kv_[i].block_size.store(static_cast<uint32_t>(o.block_size));
      kv_[i].index.set_max_blocks(params.kv_blocks);
      kv_[i].state.store(KvStreamState::kLive);
      feeds_.push_back(std::make_unique<KvFeed>(kv_[i], o.kv_event_delay_ms));
      engines_.push_back(std::make_unique<sim::EngineModel>(params, feeds_.back().get()));
      candidates_.push_back(
          {.identity = "engine-" + std::to_string(i) + "/sim@inproc://" + std::to_string(i),
           .weight = 1.0,
           .evidence = &evidence_[i],
           .kv = &kv_[i],
           .lmcache = &lmcache_[i]});
      lmcache_[i].fresh.store(true);
      lmcache_[i].available.store(true);
      pointers_.push_back(&counters_[i]);
      if (i >= prefill_engines_) decode_kv_.push_back(&kv_[i]);
    }
    if (o.detail) {
      o.detail->engines.assign(o.engines, {});
      o.detail->requests.assign(trace.size(), {});
    }
  }

  tl::expected<RunSamples, std::string> run(std::string_view strategy) {
    BalancerDeps deps{&rng_, &clock_};
    adaptive_state_ = std::make_unique<AdaptiveRouteState>(std::string(strategy));
    const RouteSettings settings{.policy = &kReplayedPolicy,
                                 .adaptive = &kReplayedAdaptivePolicy,
                                 .adaptive_state = adaptive_state_.get()};
    // Disaggregated: the strategy picks among the prefill engines only.
    const std::span<const CandidateSpec> picked_among =
        prefill_engines_ ? std::span(candidates_).first(prefill_engines_)
                         : std::span<const CandidateSpec>(candidates_);
    auto lb = make_balancer(strategy, picked_among, deps, settings);
    if (!lb) return tl::unexpected(lb.error());
    balancer_ = std::move(*lb);
    const auto wall_start = std::chrono::steady_clock::now();
    const std::string label =
        options_.pd ? pd_label(*options_.pd, strategy) : std::string(strategy);
    Progress progress(label, trace_.size(), options_.progress);
    const double t0 = trace_.empty() ? 0 : static_cast<double>(trace_.front().timestamp_ms);
    next_sample_ms_ = 0;
    next_lmcache_poll_ms_ = 0;
    for (size_t i = 0; i < trace_.size(); ++i) {
      const double at = (static_cast<double>(trace_[i].timestamp_ms) - t0) / options_.speedup;
      drain_until(at);
      arrive(i, std::max(at, now_ms_));
      progress.update(done_);
    }
    drain_all();
    progress.finish(done_);
    if (kv_decode_errors_ > 0) {
      return tl::unexpected(std::to_string(kv_decode_errors_) +
                            " KV event batches failed to decode");
    }
    if (options_.detail) {
      for (size_t e = 0; e < engines_.size(); ++e) {
        options_.detail->engines[e].prefill_computed_tokens =
            engines_[e]->prefill_computed_tokens();
        options_.detail->engines[e].kv_blocks_pulled = engines_[e]->kv_blocks_pulled();
      }
    }
    samples_.requests = trace_.size();
    samples_.duration_s = last_completion_ms_ / 1000.0;
    samples_.wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    return std::move(samples_);
  }

 private:
  // Advances every engine to `at_ms` and applies what they reported, in time order. The prefill
  // engines go first: each of their events is applied once the decode engines have caught up
  // with it, so a handoff submits to a decode engine at the prefill step's end.
  void drain_until(double at_ms) {
    if (prefill_engines_ > 0) {
      prefill_events_.clear();
      collect(0, prefill_engines_, at_ms, prefill_events_);
      for (const EngineEvent& ee : prefill_events_) {
        drain_engines(prefill_engines_, engines_.size(), ee.event.at_ms);
        apply(ee);
      }
    }
    drain_engines(prefill_engines_, engines_.size(), at_ms);
    sample_until(at_ms);
    now_ms_ = std::max(now_ms_, at_ms);
  }

  // Engines [from, to) advanced to `at_ms`; their events appended to `out`, in time order (ties:
  // engine order).
  void collect(size_t from, size_t to, double at_ms, std::vector<EngineEvent>& out) {
    for (size_t e = from; e < to; ++e) {
      scratch_.clear();
      engines_[e]->advance(at_ms, scratch_);
      for (auto& ev : scratch_) out.push_back({e, std::move(ev)});
    }
    std::stable_sort(out.begin(), out.end(), [](const EngineEvent& a, const EngineEvent& b) {
      return a.event.at_ms < b.event.at_ms;
    });
  }

  void drain_engines(size_t from, size_t to, double at_ms) {
    events_.clear();
    collect(from, to, at_ms, events_);
    for (const EngineEvent& ee : events_) apply(ee);
  }

  // After the last arrival: run every engine dry.
  void drain_all() {
    for (;;) {
      std::optional<double> next;
      for (const auto& e : engines_) {
        if (auto t = e->next_event_ms(); t && (!next || *t < *next)) next = t;
      }
      if (!next) break;
      // Jump far ahead in one step: nothing arrives any more, so no order across engines matters
      // except for the imbalance samples, which apply() takes from event times.
      drain_until(*next + 60'000);
    }
  }

  void apply(const EngineEvent& ee) {
    const sim::ModelEvent& ev = ee.event;
    sample_until(ev.at_ms);
    InFlight& r = requests_[ev.id];
    InProcessDetail::Request* d = options_.detail ? &options_.detail->requests[ev.id] : nullptr;
    if (ev.kind == sim::ModelEvent::Kind::kFirstToken) {
      // What the gateway learns from the step's first byte: its time to first token.
      evidence_[ee.engine].record_success({.queue_depth = static_cast<double>(r.queue_depth),
                                           .queued_prefill_ktokens = r.queued_prefill_ktokens,
                                           .prompt_ktokens = r.prompt_ktokens,
                                           .uncached_ktokens = r.uncached_ktokens,
                                           .latency_ms = ev.at_ms - r.arrival_ms});
      release_prefill(ee.engine, r);
      if (!r.remote_kv) {
        // The step that computed the prompt: what it found cached was computed nowhere.
        samples_.hit_tokens += ev.cached_tokens;
        samples_.query_tokens += ev.prompt_tokens;
      }
      if (!r.prefill_step) {
        samples_.ttft_ms.push_back(ev.at_ms - r.arrival_ms);
        r.last_token_ms = ev.at_ms;
        if (d) d->first_token_ms = ev.at_ms;
      }
    } else if (ev.kind == sim::ModelEvent::Kind::kToken) {
      if (!r.prefill_step) {
        samples_.itl_ms.push_back(ev.at_ms - r.last_token_ms);
        r.last_token_ms = ev.at_ms;
      }
    } else if (ev.kind == sim::ModelEvent::Kind::kFinished) {
      counters_[ee.engine].in_flight.fetch_sub(1, std::memory_order_relaxed);
      release_prefill(ee.engine, r);  // an answer with no first token event
      if (r.prefill_step) {
        if (d) d->prefill_done_ms = ev.at_ms;
        hand_off(ev.id, ev.at_ms);
        return;
      }
      samples_.e2e_ms.push_back(ev.at_ms - r.arrival_ms);
      samples_.output_tokens += r.output_tokens;
      last_completion_ms_ = std::max(last_completion_ms_, ev.at_ms);
      if (d) d->finished_ms = ev.at_ms;
      ++done_;
    }
  }

  // The request's prefill is done: it leaves the engine's queued prefill (once).
  void release_prefill(size_t engine, InFlight& r) {
    counters_[engine].prefill_tokens.fetch_sub(r.prefill_tokens, std::memory_order_relaxed);
    r.prefill_tokens = 0;
  }

  // Takes the imbalance samples due before `at_ms`; loads are constant between events. Over the
  // engines that stream answers (the decode engines when disaggregated).
  void sample_until(double at_ms) {
    while (next_sample_ms_ <= at_ms) {
      uint32_t max = 0;
      uint64_t sum = 0;
      for (size_t i = prefill_engines_; i < engines_.size(); ++i) {
        const uint32_t v = counters_[i].in_flight.load(std::memory_order_relaxed);
        max = std::max(max, v);
        sum += v;
      }
      samples_.add_imbalance_sample(
          max, static_cast<double>(sum) / (engines_.size() - prefill_engines_));
      next_sample_ms_ += options_.sample_ms;
    }
    while (next_lmcache_poll_ms_ <= at_ms) {
      for (size_t i = 0; i < engines_.size(); ++i) {
        lmcache_[i].occupancy.store(engines_[i]->occupancy(), std::memory_order_relaxed);
      }
      next_lmcache_poll_ms_ += kLmcachePollMs;
    }
  }

  void arrive(size_t i, double at_ms) {
    const TraceRequest& req = trace_[i];
    clock_.advance(std::chrono::duration_cast<Clock::Duration>(
                       std::chrono::duration<double, std::milli>(at_ms)) -
                   clock_.now().time_since_epoch());
    text_.clear();
    std::vector<uint32_t> tokens;
    expand_prompt(req, &text_, &tokens);

    RouteContext ctx;
    ctx.session_key = req.session;
    ctx.prompt = std::string_view(text_).substr(0, RouteContext::kPromptBound);
    ctx.prompt_len = text_.size();
    ctx.prompt_digest = hash64(text_);
    ctx.token_ids = std::span<const uint32_t>(tokens);
    for (auto& feed : feeds_) kv_decode_errors_ += feed->deliver_until(at_ms);
    requests_[i] = InFlight{.arrival_ms = at_ms, .output_tokens = req.output_length};
    if (options_.detail) options_.detail->requests[i].arrival_ms = at_ms;

    size_t engine = 0;
    size_t output_tokens = req.output_length;
    if (prefill_engines_ > 0) {
      const SplitDecision split = decide_split(ctx, decode_kv_, options_.min_uncached_tokens);
      if (split.disaggregate) {
        ++samples_.split_requests;
        requests_[i].prefill_step = true;
        output_tokens = 1;  // step 1: max_tokens = 1
      }
      if (!split.disaggregate) engine = decode_holding_most(ctx);
    }
    if (prefill_engines_ == 0 || requests_[i].prefill_step) {
      const Loads loads{std::span<const LoadSignals* const>(pointers_).first(
          prefill_engines_ ? prefill_engines_ : engines_.size())};
      auto pick = balancer_->pick_eligible(ctx, loads, [](size_t) { return true; });
      if (!pick || *pick >= loads.size()) {
        ++samples_.errors;
        ++done_;
        return;
      }
      balancer_->observe(*pick, ctx);
      engine = *pick;
      if (options_.detail)
        options_.detail->requests[i].prefill_engine =
            prefill_engines_ ? static_cast<int>(engine) : -1;
    }
    submit(i, engine, at_ms, &ctx, std::move(tokens), output_tokens);
  }

  // Not split: the decode engine whose index holds the longest prefix (ties: least in-flight,
  // then the lowest index).
  size_t decode_holding_most(const RouteContext& ctx) {
    RequestBlockKeys keys(ctx);
    size_t best = prefill_engines_;
    size_t best_held = 0;
    for (size_t e = prefill_engines_; e < engines_.size(); ++e) {
      const auto m = match_kv(&kv_[e], keys);
      const size_t held = m ? m->held_blocks : 0;
      const bool better =
          e == prefill_engines_ || held > best_held || (held == best_held && load(e) < load(best));
      if (better) {
        best = e;
        best_held = held;
      }
    }
    return best;
  }

  // A split request's prefill step answered at `at_ms`: step 2, on the least loaded decode engine,
  // pulling the KV it lacks.
  void hand_off(uint64_t id, double at_ms) {
    size_t best = prefill_engines_;
    for (size_t e = prefill_engines_ + 1; e < engines_.size(); ++e) {
      if (load(e) < load(best)) best = e;
    }
    std::vector<uint32_t> tokens;
    expand_prompt(trace_[id], nullptr, &tokens);
    requests_[id].prefill_step = false;
    requests_[id].remote_kv = true;
    submit(id, best, at_ms, nullptr, std::move(tokens), trace_[id].output_length);
  }

  uint32_t load(size_t engine) const {
    return counters_[engine].in_flight.load(std::memory_order_relaxed);
  }

  // Submits request `id`'s current step to `engine` and counts it there. `ctx`: the request, for
  // the uncached count a prefilling step adds to the engine's queued prefill; null for a step
  // that pulls its KV.
  void submit(uint64_t id, size_t engine, double at_ms, const RouteContext* ctx,
              std::vector<uint32_t> tokens, size_t output_tokens) {
    InFlight& r = requests_[id];
    const Loads loads{std::span<const LoadSignals* const>(pointers_)};
    r.engine = static_cast<uint32_t>(engine);
    r.queue_depth = loads[engine];
    r.queued_prefill_ktokens = loads.prefill_ktokens(engine);
    r.prompt_ktokens = ctx ? ctx->prompt_ktokens() : static_cast<double>(tokens.size()) / 1000;
    r.uncached_ktokens = 0;
    if (ctx) {
      RequestBlockKeys keys(*ctx);
      r.uncached_ktokens = uncached_ktokens(*ctx, &kv_[engine], keys);
    }
    r.prefill_tokens = static_cast<uint64_t>(std::llround(r.uncached_ktokens * 1000));
    counters_[engine].prefill_tokens.fetch_add(r.prefill_tokens, std::memory_order_relaxed);
    counters_[engine].in_flight.fetch_add(1, std::memory_order_relaxed);
    if (!r.prefill_step) {
      samples_.assigned.add(r.arrival_ms, engine - prefill_engines_);
      if (options_.detail) options_.detail->requests[id].engine = static_cast<int>(engine);
    }
    if (options_.detail) ++options_.detail->engines[engine].requests;
    sim::ModelRequest mr;
    mr.id = id;
    mr.tokens = std::move(tokens);
    mr.output_tokens = output_tokens;
    mr.kv_from_remote = r.remote_kv;
    engines_[engine]->submit(at_ms, std::move(mr));
  }

  std::span<const TraceRequest> trace_;
  const InProcessOptions& options_;
  const size_t prefill_engines_;  // 0: aggregated
  SeededRandom rng_;
  ManualClock clock_;
  // Before the engines, which report to the feeds until they are destroyed.
  std::unique_ptr<KvResidency[]> kv_;         // the gateway's KV index, per engine
  std::unique_ptr<LmcacheSignal[]> lmcache_;  // what the LMCache poller would read, per engine
  std::vector<std::unique_ptr<KvFeed>> feeds_;
  std::vector<std::unique_ptr<sim::EngineModel>> engines_;
  std::vector<CandidateSpec> candidates_;
  std::unique_ptr<LoadSignals[]> counters_;
  std::unique_ptr<InstanceEvidence[]> evidence_;  // what a gateway would learn, per engine
  std::vector<const LoadSignals*> pointers_;
  std::vector<const KvResidency*> decode_kv_;  // the decode engines' indexes (all, aggregated)
  std::unique_ptr<AdaptiveRouteState> adaptive_state_;  // before the balancer that points to it
  std::unique_ptr<LoadBalancer> balancer_;
  std::vector<InFlight> requests_;
  std::vector<sim::ModelEvent> scratch_;
  std::vector<EngineEvent> events_;
  std::vector<EngineEvent> prefill_events_;
  std::string text_;
  RunSamples samples_;
  double now_ms_ = 0;
  double next_sample_ms_ = 0;
  double next_lmcache_poll_ms_ = 0;
  double last_completion_ms_ = 0;
  uint64_t done_ = 0;
  uint64_t kv_decode_errors_ = 0;
};

}  // namespace

tl::expected<RunSamples, std::string> replay_in_process(std::span<const TraceRequest> trace,
                                                        std::string_view strategy,
                                                        const InProcessOptions& options) {
  if (options.engines == 0) return tl::unexpected(std::string("--engines must be at least 1"));
  if (options.block_size == 0) return tl::unexpected(std::string("--block-size must be positive"));
  if (options.speedup <= 0) return tl::unexpected(std::string("--speedup must be positive"));
  if (options.sample_ms <= 0) return tl::unexpected(std::string("--sample-ms must be positive"));
  if (options.pd && (options.pd->prefill == 0 || options.pd->decode == 0 ||
                     options.pd->prefill + options.pd->decode != options.engines)) {
    return tl::unexpected(std::string("--pd P:D needs P, D >= 1 and P + D = --engines"));
  }
  Replay replay(trace, options);
  return replay.run(strategy);
}

}  // namespace rolter::bench
