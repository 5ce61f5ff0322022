// DecisionVerdict: what a decision service answered about one request (SPEC §7): a probability
// per target model and its confidence.
//
// Produced on the request path before the pick (proxy/decision_client.h), owned by the request,
// and read through RouteContext::decision by policy mode's decision_service plugin. Only a reply
// that may vote becomes a verdict: a failed call, a bad reply or a confidence outside (0, 1]
// leaves RouteContext::decision null.
//
// Thread-safety: a value type; read-only once built.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rolter {

struct DecisionVerdict {
  // The model the service chose (its `choice`); informational.
  std::string choice;
  // (model, probability) for the models the reply named; a model it did not name has none.
  std::vector<std::pair<std::string, double>> probabilities;
  // In (0, 1]: multiplies the plugin's configured weight for this request.
  double confidence = 1.0;

  // The probability given to `model`, when the reply named it.
  std::optional<double> probability(std::string_view model) const {
    for (const auto& [name, p] : probabilities) {
      if (name == model) return p;
    }
    return std::nullopt;
  }
};

}  // namespace rolter
