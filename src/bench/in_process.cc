#include "bench/in_process.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <memory>
#include <vector>

#include "balance/adaptive/adaptive_policy.h"
#include "balance/adaptive/adaptive_route_state.h"
#include "balance/lmcache_signal.h"
#include "balance/policy/policy_settings.h"
#include "balance/balancer_factory.h"
#include "balance/evidence/instance_evidence.h"
#include "balance/kv_match.h"
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
  uint32_t output_tokens = 0;
  uint32_t engine = 0;
  uint32_t queue_depth = 0;  // the engine's load before this request joined it
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
    pending_.push_back({at_ms + delay_ms_, sim::encode_kv_batch(at_ms / 1000, events,
                                                                sim::KvFormat::kArray)});
  }

  // Applies every batch due by `now_ms`, in order. Returns the number that failed to decode.
  size_t deliver_until(double now_ms) {
    size_t errors = 0;
    while (!pending_.empty() && pending_.front().due_ms <= now_ms) {
      const std::string& payload = pending_.front().payload;
      auto decoded = decode_kv_batch(std::span(
          reinterpret_cast<const uint8_t*>(payload.data()), payload.size()));
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
const PolicySettings kReplayedPolicy{.least_inflight_weight = 1.0,
                                     .session_affinity_weight = 1.0};
// lmcache_aware reads each engine's occupancy as the LMCache poller would leave it: refreshed
// once a second (virtual time), the poller's default interval.
constexpr double kLmcachePollMs = 1000;

class Replay {
 public:
  Replay(std::span<const TraceRequest> trace, const InProcessOptions& o)
      : trace_(trace),
        options_(o),
        rng_(o.seed),
        kv_(std::make_unique<KvResidency[]>(o.engines)),
        lmcache_(std::make_unique<LmcacheSignal[]>(o.engines)),
        counters_(std::make_unique<LoadSignals[]>(o.engines)),
        evidence_(std::make_unique<InstanceEvidence[]>(o.engines)),
        requests_(trace.size()) {
    samples_.assigned = WindowedImbalance(o.engines);
    sim::EngineModelParams params = o.model;
    params.block_size = o.block_size;
    params.kv_blocks = o.kv_tokens_per_engine / o.block_size;
    // Only first-token and finished events matter here; per-token events would be most of the work.
    params.token_events = false;
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
    }
  }

  tl::expected<RunSamples, std::string> run(std::string_view strategy) {
    BalancerDeps deps{&rng_, &clock_};
    adaptive_state_ = std::make_unique<AdaptiveRouteState>(std::string(strategy));
    const RouteSettings settings{.policy = &kReplayedPolicy,
                                 .adaptive = &kReplayedAdaptivePolicy,
                                 .adaptive_state = adaptive_state_.get()};
    auto lb = make_balancer(strategy, candidates_, deps, settings);
    if (!lb) return tl::unexpected(lb.error());
    balancer_ = std::move(*lb);
    const auto wall_start = std::chrono::steady_clock::now();
    Progress progress(std::string(strategy), trace_.size(), options_.progress);
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

    for (const auto& e : engines_) {
      samples_.hit_tokens += e->prefix_hit_tokens();
      samples_.query_tokens += e->prefix_query_tokens();
    }
    samples_.requests = trace_.size();
    samples_.duration_s = last_completion_ms_ / 1000.0;
    samples_.wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    return std::move(samples_);
  }

 private:
  // Advances every engine to `at_ms` and applies what they reported, in time order.
  void drain_until(double at_ms) {
    events_.clear();
    for (size_t e = 0; e < engines_.size(); ++e) {
      scratch_.clear();
      engines_[e]->advance(at_ms, scratch_);
      for (auto& ev : scratch_) events_.push_back({e, std::move(ev)});
    }
    apply_events();
    sample_until(at_ms);
    now_ms_ = std::max(now_ms_, at_ms);
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
      // except for the imbalance samples, which apply_events() takes from event times.
      drain_until(*next + 60'000);
    }
  }

  void apply_events() {
    std::stable_sort(
        events_.begin(), events_.end(),
        [](const EngineEvent& a, const EngineEvent& b) { return a.event.at_ms < b.event.at_ms; });
    for (const EngineEvent& ee : events_) {
      const sim::ModelEvent& ev = ee.event;
      sample_until(ev.at_ms);
      InFlight& r = requests_[ev.id];
      if (ev.kind == sim::ModelEvent::Kind::kFirstToken) {
        samples_.ttft_ms.push_back(ev.at_ms - r.arrival_ms);
        // What the gateway learns from a streamed answer: its time to first token.
        evidence_[ee.engine].record_success({.queue_depth = static_cast<double>(r.queue_depth),
                                             .queued_prefill_ktokens = r.queued_prefill_ktokens,
                                             .prompt_ktokens = r.prompt_ktokens,
                                             .uncached_ktokens = r.uncached_ktokens,
                                             .latency_ms = ev.at_ms - r.arrival_ms});
        release_prefill(ee.engine, r);
      } else if (ev.kind == sim::ModelEvent::Kind::kFinished) {
        samples_.e2e_ms.push_back(ev.at_ms - r.arrival_ms);
        samples_.output_tokens += r.output_tokens;
        counters_[ee.engine].in_flight.fetch_sub(1, std::memory_order_relaxed);
        release_prefill(ee.engine, r);  // an answer with no first token event
        last_completion_ms_ = std::max(last_completion_ms_, ev.at_ms);
        ++done_;
      }
    }
  }

  // The request's prefill is done: it leaves the engine's queued prefill (once).
  void release_prefill(size_t engine, InFlight& r) {
    counters_[engine].prefill_tokens.fetch_sub(r.prefill_tokens, std::memory_order_relaxed);
    r.prefill_tokens = 0;
  }

  // Takes the imbalance samples due before `at_ms`; loads are constant between events.
  void sample_until(double at_ms) {
    while (next_sample_ms_ <= at_ms) {
      uint32_t max = 0;
      uint64_t sum = 0;
      for (size_t i = 0; i < engines_.size(); ++i) {
        const uint32_t v = counters_[i].in_flight.load(std::memory_order_relaxed);
        max = std::max(max, v);
        sum += v;
      }
      samples_.add_imbalance_sample(max, static_cast<double>(sum) / engines_.size());
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

    const Loads loads{std::span<const LoadSignals* const>(pointers_)};
    auto pick = balancer_->pick_eligible(ctx, loads, [](size_t) { return true; });
    if (!pick || *pick >= engines_.size()) {
      ++samples_.errors;
      ++done_;
      return;
    }
    balancer_->observe(*pick, ctx);
    samples_.assigned.add(at_ms, *pick);
    requests_[i] = InFlight{.arrival_ms = at_ms,
                            .output_tokens = req.output_length,
                            .engine = static_cast<uint32_t>(*pick),
                            .queue_depth = loads[*pick],
                            .queued_prefill_ktokens = loads.prefill_ktokens(*pick),
                            .prompt_ktokens = ctx.prompt_ktokens(),
                            .uncached_ktokens = [&] {
                              RequestBlockKeys keys(ctx);
                              return uncached_ktokens(ctx, &kv_[*pick], keys);
                            }()};
    requests_[i].prefill_tokens =
        static_cast<uint64_t>(std::llround(requests_[i].uncached_ktokens * 1000));
    counters_[*pick].prefill_tokens.fetch_add(requests_[i].prefill_tokens,
                                              std::memory_order_relaxed);
    counters_[*pick].in_flight.fetch_add(1, std::memory_order_relaxed);
    sim::ModelRequest mr;
    mr.id = i;
    mr.tokens = std::move(tokens);
    mr.output_tokens = req.output_length;
    engines_[*pick]->submit(at_ms, std::move(mr));
  }

  std::span<const TraceRequest> trace_;
  const InProcessOptions& options_;
  SeededRandom rng_;
  ManualClock clock_;
  // Before the engines, which report to the feeds until they are destroyed.
  std::unique_ptr<KvResidency[]> kv_;  // the gateway's KV index, per engine
  std::unique_ptr<LmcacheSignal[]> lmcache_;  // what the LMCache poller would read, per engine
  std::vector<std::unique_ptr<KvFeed>> feeds_;
  std::vector<std::unique_ptr<sim::EngineModel>> engines_;
  std::vector<CandidateSpec> candidates_;
  std::unique_ptr<LoadSignals[]> counters_;
  std::unique_ptr<InstanceEvidence[]> evidence_;  // what a gateway would learn, per engine
  std::vector<const LoadSignals*> pointers_;
  std::unique_ptr<AdaptiveRouteState> adaptive_state_;  // before the balancer that points to it
  std::unique_ptr<LoadBalancer> balancer_;
  std::vector<InFlight> requests_;
  std::vector<sim::ModelEvent> scratch_;
  std::vector<EngineEvent> events_;
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
  Replay replay(trace, options);
  return replay.run(strategy);
}

}  // namespace rolter::bench
