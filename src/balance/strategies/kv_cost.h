// KvCostBalancer: SPEC §6.14, kv_cost: send each request where its time to first token is
// estimated lowest.
//
// The model, per candidate i:
//
//   ttft_i ≈ c + b · queue_i + a · uncached_ktokens_i
//
//   uncached_ktokens_i  the request's tokens not among the leading blocks instance i's KV-event
//                       index holds (balance/kv_match.h), in thousands: the prefill it would do.
//                       All of the prompt when the index is unknown or not live.
//   queue_i             the candidate's load as every strategy reads it (balance/loads.h): the
//                       engine-reported running + waiting with load_source = "engine_metrics",
//                       else this gateway's in-flight count; the work queued ahead.
//   a, b, c             per-token prefill cost, per-request queue cost and fixed cost. Each
//                       instance learns its own by recursive least squares from the TTFT of every
//                       successful answer (balance/evidence/ttft_model.h); a pick uses their mean
//                       over the eligible candidates, with a and b never below 0.
//
// Why pooled costs: the candidates of one route serve one model, usually on one kind of
// hardware, and what tells them apart for one request is its state, not their speed: how much of
// the prompt each holds and how much is queued there. Per-instance fits of a noisy signal differ by
// tens of percent between identical engines; compared directly, they send every long uncached
// prompt to whichever engine happened to learn the lowest prefill cost (measured: 60 s window
// imbalance 1.50 instead of 1.06 on the conversation trace). A fleet of unlike engines is better
// served by predicted_latency or fastest, which compare the instances themselves.
//
// It is the KV-event counterpart of predicted_latency: predicted_latency sees the whole prompt
// and learns an average cache benefit, kv_cost sees what each instance actually holds, so it
// trades a longer queue for a larger cache hit exactly when the prefill saved is worth more.
//
// Even shares: a conversation stays where its cache is, so engines that hold long conversations are
// given more requests per minute than the others, though their queues stay short (a 60 s window
// imbalance of 1.15-1.19 on the public traces). Before costing, a request that would lose no cache
// by it (a candidate below its share holds as much of the prompt as the best) is placed only among
// the candidates below (1 + kEvenShareSlack) x their mean share of the last minute's requests
// (balance/recent_shares.h). A request that has more cached on an engine above its share still
// goes there if its cost says so: its cache is worth more than an even count.
//
// Pick: when every eligible candidate is warm (8 samples), the lowest cost wins: the estimate
// plus (kUncachedWeight - 1) · a · uncached_ktokens_i, i.e. uncached tokens charged
// kUncachedWeight times their prefill. A prompt's tokens are worth more than its own prefill where
// they land: the conversation's next turns reuse them there, and a copy made elsewhere evicts
// another conversation's. Charged at 1×, kv_cost kept 88% (conversation, as recorded) and 75%
// (4×) of the pooled-cache bound; at 16×, 98.8% and 98.9%, with its TTFT p99 still the lowest of
// every strategy (docs/benchmarks.md, "kv_cost at the bound"). Equal costs (the same state on every
// engine, e.g. a new conversation on an idle fleet) go to the least loaded, then to the one that
// served the fewest requests (observe()), then at random. Until every eligible candidate is warm
// the least-loaded eligible candidate wins, with the same tie-breaks, which also warms the cold
// ones. Honours eligibility: an ineligible candidate is never returned and never makes the pick
// cold. With ctx.explain set it records per candidate "ttft_ms" (the estimate) and
// "uncached_ktokens".
//
// Thread-safety: every method may be called concurrently; the models are read lock-free and the
// indexes under their shared locks. Per-pick scratch lives in thread_local buffers that only
// grow, so after a thread's first pick at a given candidate count and prompt size a pick
// allocates nothing (unless asked to explain).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "balance/candidate.h"
#include "balance/load_balancer.h"
#include "balance/recent_shares.h"
#include "balance/strategy_names.h"
#include "common/clock.h"
#include "common/random.h"

namespace rolter {

class KvCostBalancer final : public LoadBalancer {
 public:
  // How many times its prefill an uncached token is charged in the pick (see above).
  static constexpr double kUncachedWeight = 16;

  // `random` breaks ties and `clock` times the recent shares; both must outlive the balancer.
  KvCostBalancer(std::span<const CandidateSpec> candidates, Random& random,
                 const Clock& clock = default_clock());

  std::string_view name() const override { return strategy::kKvCost; }
  std::optional<size_t> pick(const RouteContext& ctx, const Loads& loads) override;
  std::optional<size_t> pick_eligible(const RouteContext& ctx, const Loads& loads,
                                      Eligible eligible) override;
  // Counts the request for the served tie-break and the recent shares; an index out of range is
  // ignored.
  void observe(size_t index, const RouteContext& ctx) override;

 private:
  struct Instance {
    const InstanceEvidence* evidence = nullptr;
    const KvResidency* kv = nullptr;
  };
  std::vector<Instance> instances_;
  Random& random_;
  std::unique_ptr<std::atomic<uint64_t>[]> served_;
  RecentShares shares_;
};

}  // namespace rolter
