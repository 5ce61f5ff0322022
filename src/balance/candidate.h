// CandidateSpec: what a balancer knows about each candidate when it is built (SPEC §4).
//
// Candidates are every instance of every target of a route, in a stable order; a balancer returns
// indexes into that order. Immutable after the snapshot is built.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace rolter {

struct InstanceEvidence;
struct KvResidency;
struct LmcacheSignal;

struct CandidateSpec {
  // Stable identity of the candidate across reloads: "<provider>/<model>@<base_url>". Ring
  // positions and affinity keys derive from it, never from the index.
  std::string identity;
  // The upstream model the candidate serves (its target's `model`); empty for passthrough group
  // members, which serve whatever was requested. Policy mode's decision plugin scores by it.
  std::string model;
  // Index of the candidate's target (or group member) in the route's config: the instances of one
  // target share it.
  size_t target = 0;
  // Per-instance weight: the target's weight split evenly over its instances, so a target's share
  // does not change with its instance count. >= 0 and finite.
  double weight = 1.0;
  // Catalog price per million tokens, input + output (the target's [cost], else its provider's);
  // nullopt when neither declares one.
  std::optional<double> price;
  // Adapters the instance keeps resident (the provider's max_loras).
  uint32_t max_loras = 8;
  // What the gateway learned about the instance (latency EWMA, latency model). Owned by the
  // LoadTracker and outlives the balancer; null when there is none (then those signals are
  // neutral).
  const InstanceEvidence* evidence = nullptr;
  // What the instance's KV-event stream says it holds (SPEC §6.8). Owned by the LoadTracker; null
  // when the gateway keeps none (then KV scores are neutral and every prompt token counts as
  // uncached).
  const KvResidency* kv = nullptr;
  // The instance's LMCache occupancy, kept fresh by a background poller (SPEC §6.9). Owned by the
  // LoadTracker and outlives the balancer; null when there is none (then that signal is neutral).
  const LmcacheSignal* lmcache = nullptr;
};

}  // namespace rolter
