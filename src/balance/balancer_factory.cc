#include "balance/balancer_factory.h"

#include <cmath>
#include <string>

#include "balance/strategy_registry.h"

namespace rolter {
namespace {

// Weights are checked for every strategy, not only those that read them: a bad weight is a config
// error wherever it appears, and a strategy change must not turn it into a silent one.
std::optional<std::string> check_weights(std::span<const CandidateSpec> candidates) {
  for (size_t i = 0; i < candidates.size(); ++i) {
    const double weight = candidates[i].weight;
    if (!std::isfinite(weight) || weight < 0) {
      return "candidate " + std::to_string(i) + " (" + candidates[i].identity + ") has weight " +
             std::to_string(weight) + ": weights must be finite and >= 0";
    }
  }
  return std::nullopt;
}

}  // namespace

tl::expected<std::unique_ptr<LoadBalancer>, std::string> make_balancer(
    std::string_view strategy, std::span<const CandidateSpec> candidates, const BalancerDeps& deps,
    const RouteSettings& settings) {
  if (auto problem = check_weights(candidates)) return tl::unexpected(std::move(*problem));
  const StrategyInfo* info = find_strategy(strategy);
  if (info == nullptr) return tl::unexpected(unknown_strategy_message(strategy));
  return info->make(candidates, deps, settings);
}

}  // namespace rolter
