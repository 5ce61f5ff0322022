#include "balance/strategies/cache_aware.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "balance/explain.h"
#include "balance/strategies/pick_helpers.h"

namespace rolter {
namespace {

// Per-thread scratch for one pick. Buffers only grow: a thread pays one allocation the first time
// it sees a larger candidate list and none afterwards.
struct Scratch {
  std::vector<uint32_t> matched;
  std::vector<uint32_t> loads;
  std::vector<uint32_t> recent;  // requests given in the last minute (RecentShares)
  // The caller's eligible set, then narrowed to the candidates below their share; char, not bool:
  // std::vector<bool> packs bits and is slower here.
  std::vector<char> eligible;
  std::vector<char> asked;  // the caller's eligible set, for the explanation

  void ensure(size_t n) {
    if (matched.size() < n) {
      matched.resize(n);
      loads.resize(n);
      recent.resize(n);
      eligible.resize(n);
      asked.resize(n);
    }
  }
};

Scratch& scratch() {
  thread_local Scratch buffers;
  return buffers;
}

// How a pick was decided, kept for the explanation.
enum class Path { kNoneEligible, kEmptyPrompt, kAffinity, kOverloaded, kColdMatch };

struct Decision {
  std::optional<size_t> index;
  Path path = Path::kNoneEligible;
  size_t warm = 0;  // the warm candidate, for kAffinity and kOverloaded
  uint32_t min_load = 0;
  double mean_load = 0;  // over the eligible candidates
  uint32_t best = 0;     // the longest eligible match, in bytes
  size_t over_share = 0;  // candidates passed over as above their share
};

// Asks eligible() once per candidate and reads each load once, so every later step sees the same
// values. Returns min_load over the eligible candidates, nullopt when none is eligible, and sets
// *mean_load to their mean.
std::optional<uint32_t> read_candidates(Scratch& s, size_t n, const Loads& loads,
                                        Eligible eligible, double* mean_load) {
  std::optional<uint32_t> min_load;
  uint64_t total = 0;
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) {
    s.eligible[i] = eligible(i) ? 1 : 0;
    s.loads[i] = loads[i];
    if (!s.eligible[i]) continue;
    if (!min_load || s.loads[i] < *min_load) min_load = s.loads[i];
    total += s.loads[i];
    ++count;
  }
  *mean_load = count > 0 ? static_cast<double>(total) / static_cast<double>(count) : 0;
  return min_load;
}

// The least-loaded eligible candidate; among several at min_load, the one that has served the
// fewest requests.
size_t least_loaded(const Scratch& s, size_t n, uint32_t min_load,
                    const std::atomic<uint64_t>* served, Random& random) {
  return smallest_among(
      n, [&](size_t i) { return s.eligible[i] && s.loads[i] == min_load; },
      [&](size_t i) { return served[i].load(std::memory_order_relaxed); }, random);
}

// Among the eligible candidates whose match is `best`, the least loaded: the conversation may have
// been spread to several replicas before.
size_t least_loaded_match(const Scratch& s, size_t n, uint32_t best, Random& random) {
  return smallest_among(
      n, [&](size_t i) { return s.eligible[i] && s.matched[i] == best; },
      [&](size_t i) { return uint64_t{s.loads[i]}; }, random);
}

// The least load over the eligible candidates; REQUIRES: one is eligible.
uint32_t least_eligible_load(const Scratch& s, size_t n) {
  uint32_t least = UINT32_MAX;
  for (size_t i = 0; i < n; ++i) {
    if (s.eligible[i]) least = std::min(least, s.loads[i]);
  }
  return least;
}

uint32_t longest_eligible_match(const Scratch& s, size_t n) {
  uint32_t best = 0;
  for (size_t i = 0; i < n; ++i) {
    if (s.eligible[i] && s.matched[i] > best) best = s.matched[i];
  }
  return best;
}

// "92%": in integers and rounded down, so a match just under half never reads as reaching it.
std::string percent(uint32_t matched, size_t prompt_size) {
  return std::to_string(uint64_t{matched} * 100 / prompt_size) + "%";
}

void explain_rows(Explain& explain, const Scratch& s, size_t n, size_t prompt_size) {
  for (size_t i = 0; i < n; ++i) {
    explain.eligible(i, s.asked[i] != 0);
    explain.load(i, s.loads[i]);
    const double ratio = prompt_size == 0
                             ? 0.0
                             : static_cast<double>(s.matched[i]) / static_cast<double>(prompt_size);
    explain.score(i, "prefix", ratio);
  }
}

// Names the ineligible candidate, if any, whose match beat every eligible one.
void explain_ineligible_match(Explain& explain, const Scratch& s, size_t n, size_t prompt_size,
                              uint32_t best) {
  size_t longest = n;
  uint32_t longest_match = best;
  for (size_t i = 0; i < n; ++i) {
    if (!s.asked[i] && s.matched[i] > longest_match) {
      longest = i;
      longest_match = s.matched[i];
    }
  }
  if (longest == n) return;
  explain.reason("ineligible candidate " + std::to_string(longest) + " matched " +
                 percent(longest_match, prompt_size) +
                 " of the prompt, more than any eligible candidate, and was not considered");
}

void explain_decision(Explain& explain, const Decision& d, size_t prompt_size, uint32_t warm_load) {
  const std::string warm = std::to_string(d.warm);
  if (d.over_share > 0) {
    explain.reason(std::to_string(d.over_share) +
                   " candidate(s) above their share of the last minute's requests passed over: " +
                   (d.path == Path::kAffinity || d.path == Path::kOverloaded
                        ? "one below matched as much of the prompt"
                        : "no match keeps the request, and one below is no busier than the mean"));
  }
  switch (d.path) {
    case Path::kNoneEligible:
      explain.reason("no candidate is eligible");
      break;
    case Path::kEmptyPrompt:
      explain.reason("empty prompt: least loaded wins");
      break;
    case Path::kAffinity:
      explain.reason("candidate " + warm + " matched " + percent(d.best, prompt_size) +
                     " of the prompt (>= 50%) and keeps affinity");
      break;
    case Path::kOverloaded: {
      char mean[32];
      std::snprintf(mean, sizeof mean, "%.2f", d.mean_load);
      explain.reason("warm candidate " + warm + " is overloaded: load " +
                     std::to_string(warm_load) + " > mean " + mean + " + 2 and > 1.5 x " + mean +
                     "; spread to the least loaded");
      break;
    }
    case Path::kColdMatch:
      explain.reason("best match " + percent(d.best, prompt_size) + " < 50%: least loaded wins");
      break;
  }
}

}  // namespace

CacheAwareBalancer::CacheAwareBalancer(size_t candidate_count, Random& random,
                                       PrefixTree::Options options, const Clock& clock)
    : count_(candidate_count),
      random_(random),
      tree_(candidate_count, options),
      served_(std::make_unique<std::atomic<uint64_t>[]>(candidate_count)),
      shares_(candidate_count, clock) {}

std::optional<size_t> CacheAwareBalancer::pick(const RouteContext& ctx, const Loads& loads) {
  return pick_eligible(ctx, loads, [](size_t) { return true; });
}

std::optional<size_t> CacheAwareBalancer::pick_eligible(const RouteContext& ctx, const Loads& loads,
                                                        Eligible eligible) {
  // A mismatched Loads belongs to another candidate list: any index would be meaningless.
  if (count_ == 0 || loads.size() != count_) return std::nullopt;
  Scratch& s = scratch();
  s.ensure(count_);
  double mean_load = 0;
  const std::optional<uint32_t> min_load = read_candidates(s, count_, loads, eligible, &mean_load);
  std::copy_n(s.eligible.begin(), count_, s.asked.begin());
  std::fill_n(s.matched.begin(), count_, 0);
  Decision d;
  if (min_load) {
    d.min_load = *min_load;
    d.mean_load = mean_load;
    d.path = ctx.prompt.empty() ? Path::kEmptyPrompt : Path::kColdMatch;
  }
  bool warm = false;
  if (d.path == Path::kColdMatch) {
    tree_.match(ctx.prompt, std::span<uint32_t>(s.matched.data(), count_));
    d.best = longest_eligible_match(s, count_);
    const double ratio = static_cast<double>(d.best) / static_cast<double>(ctx.prompt.size());
    warm = ratio >= kMinMatchRatio;
  }
  if (min_load) {
    // Even shares: what loses nothing by it goes to the candidates below their share. A warm
    // request loses nothing on a candidate with the longest match; a cold one, which no match
    // keeps, on a candidate no busier than the mean.
    shares_.read(std::span<uint32_t>(s.recent.data(), count_));
    d.over_share = clear_above_share(
        std::span<char>(s.eligible.data(), count_),
        std::span<const uint32_t>(s.recent.data(), count_), /*weights=*/{}, [&](size_t i) {
          return warm ? s.matched[i] >= d.best
                      : static_cast<double>(s.loads[i]) <= d.mean_load;
        });
    if (d.over_share > 0) d.min_load = least_eligible_load(s, count_);
  }
  if (warm) {
    d.warm = least_loaded_match(s, count_, d.best, random_);
    d.path = overloaded_against_mean(s.loads[d.warm], d.mean_load) ? Path::kOverloaded
                                                                   : Path::kAffinity;
  }
  if (min_load) {
    d.index = d.path == Path::kAffinity
                  ? d.warm
                  : least_loaded(s, count_, d.min_load, served_.get(), random_);
  }
  if (ctx.explain != nullptr) {
    explain_rows(*ctx.explain, s, count_, ctx.prompt.size());
    explain_ineligible_match(*ctx.explain, s, count_, ctx.prompt.size(), d.best);
    explain_decision(*ctx.explain, d, ctx.prompt.size(), s.loads[d.warm]);
  }
  return d.index;
}

void CacheAwareBalancer::observe(size_t index, const RouteContext& ctx) {
  if (index >= count_) return;
  served_[index].fetch_add(1, std::memory_order_relaxed);
  shares_.add(index);
  if (ctx.prompt.empty()) return;
  tree_.insert(ctx.prompt, index);
  if (link_) link_->publish(index, ctx.prompt);
}

void CacheAwareBalancer::share(PrefixSharing* hub, std::string tree_name,
                               std::span<const CandidateSpec> candidates) {
  if (hub == nullptr) return;
  link_ = std::make_unique<PrefixShareLink>(hub, std::move(tree_name), candidates, tree_);
}

}  // namespace rolter
