#include "balance/scorers/prefix_affinity.h"

#include <algorithm>
#include <vector>

namespace rolter {

void PrefixAffinityScorer::score(const RouteContext& ctx, const Loads& loads, Eligible eligible,
                                 std::span<double> out) {
  std::fill(out.begin(), out.end(), 0.0);
  if (ctx.prompt.empty()) return;
  // Only grows: one allocation the first time a thread sees a larger candidate list.
  thread_local std::vector<uint32_t> matched;
  if (matched.size() < out.size()) matched.resize(out.size());
  const std::span<uint32_t> view(matched.data(), out.size());
  tree_.match(ctx.prompt, view);
  const double size = static_cast<double>(ctx.prompt.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = std::min(1.0, view[i] / size);
}

void PrefixAffinityScorer::observe(size_t index, const RouteContext& ctx) {
  if (ctx.prompt.empty()) return;
  tree_.insert(ctx.prompt, index);
  link_.publish(index, ctx.prompt);
}

}  // namespace rolter
