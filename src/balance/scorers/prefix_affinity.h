// PrefixAffinityScorer: SPEC §6.7 "prefix affinity": each candidate's match ratio in the
// cache_aware tree, i.e. the leading bytes of the (32 KiB-bounded) prompt it served divided by the
// prompt's length; 0 for every candidate when the prompt is empty. observe() inserts the prompt
// under the candidate that served it.
//
// Thread-safety: score() takes the tree's shared lock and observe() its exclusive lock (see
// balance/prefix/prefix_tree.h). The matched-bytes scratch is a thread_local buffer that only
// grows, so after a thread's first call at a given candidate count score() allocates nothing.
#pragma once

#include <cstddef>
#include <span>

#include "balance/prefix/prefix_sharing.h"
#include "balance/prefix/prefix_tree.h"
#include "balance/scorer.h"

namespace rolter {

class PrefixAffinityScorer final : public Scorer {
 public:
  explicit PrefixAffinityScorer(size_t candidate_count, PrefixTree::Options options = {})
      : tree_(candidate_count, options) {}
  // A scorer whose tree is shared with the other gateway nodes through `hub` (null = not shared)
  // under `tree_name` (balance/prefix/prefix_sharing.h).
  PrefixAffinityScorer(std::span<const CandidateSpec> candidates, PrefixSharing* hub,
                       std::string tree_name)
      : tree_(candidates.size()), link_(hub, std::move(tree_name), candidates, tree_) {}

  std::string_view name() const override { return "prefix_affinity"; }
  // Ratios are written for every candidate: a match is a fact about the tree, not a comparison
  // among the eligible ones, so eligibility does not change it.
  void score(const RouteContext& ctx, const Loads& loads, Eligible eligible,
             std::span<double> out) override;
  // Inserts ctx.prompt under `index` (and publishes it when shared); an index out of range is
  // ignored.
  void observe(size_t index, const RouteContext& ctx) override;

  const PrefixTree& tree() const { return tree_; }

 private:
  PrefixTree tree_;
  PrefixShareLink link_;  // after tree_: detached before the tree goes
};

}  // namespace rolter
