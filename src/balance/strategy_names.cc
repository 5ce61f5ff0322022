// The strategy registry's names. make_balancer() (balancer_factory.cc) must know every name here.
#include <array>

#include "balance/balancer_factory.h"

namespace rolter {
namespace {

constexpr std::array<std::string_view, 15> kStrategies = {
    "round_robin",       "random",          "power_of_two",
    "weighted",          "consistent_hash", "cache_aware",
    "pipeline",          "cheapest",        "fastest",
    "predicted_latency", "lora_aware",      "precise_cache_aware",
    "kv_cost",           "lmcache_aware",   "adaptive",
};

}  // namespace

bool is_known_strategy(std::string_view strategy) {
  for (auto name : kStrategies) {
    if (name == strategy) return true;
  }
  return false;
}

bool strategy_reads_weights(std::string_view strategy) {
  return strategy == "weighted" || strategy == "pipeline" || strategy == "adaptive" ||
         strategy == "policy";
}

bool strategy_reads_token_ids(std::string_view strategy) {
  return strategy == "precise_cache_aware" || strategy == "kv_cost";
}

std::span<const std::string_view> known_strategies() { return kStrategies; }

}  // namespace rolter
