// cache_aware's costs at full size: ns per pick at 8 and 64 candidates with a 32 KiB prompt
// against a warm tree (1,000 conversations of 32 KiB that share a 2 KiB system prompt), for a
// conversation the tree holds and for a novel one; ns per insert (observe) of a known and of a
// novel 32 KiB prompt into a tree filled to its 1,000,000-node cap; and the bytes a full tree
// holds, per 1M nodes.
#include <benchmark/benchmark.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "balance/prefix/prefix_tree.h"
#include "balance/strategies/cache_aware.h"
#include "balance/testing/loads_fixture.h"
#include "common/random.h"

namespace rolter {
namespace {

constexpr size_t kPromptBytes = RouteContext::kPromptBound;
constexpr size_t kSystemBytes = 2048;
constexpr size_t kConversations = 1000;

// Lowercase words of 2 to 9 letters: shaped like text, and random enough that two conversations
// part right after the shared system prompt.
void append_text(Random& random, size_t bytes, std::string& out) {
  const size_t end = out.size() + bytes;
  while (out.size() < end) {
    const size_t word = 2 + random.uniform(8);
    for (size_t k = 0; k < word && out.size() < end; ++k) {
      out.push_back(static_cast<char>('a' + random.uniform(26)));
    }
    if (out.size() < end) out.push_back(' ');
  }
}

std::vector<std::string> conversations(size_t count, uint64_t seed) {
  SeededRandom random(seed);
  std::string system;
  append_text(random, kSystemBytes, system);
  std::vector<std::string> out;
  for (size_t i = 0; i < count; ++i) {
    out.push_back(system);
    append_text(random, kPromptBytes - kSystemBytes, out.back());
  }
  return out;
}

RouteContext context(std::string_view prompt) {
  RouteContext ctx;
  ctx.prompt = prompt;
  ctx.prompt_len = prompt.size();
  return ctx;
}

// One warm balancer per candidate count, built once: Google Benchmark calls a benchmark function
// several times while it settles the iteration count.
const std::vector<std::string>& warm_texts() {
  static const std::vector<std::string> texts = conversations(kConversations, 1);
  return texts;
}

CacheAwareBalancer& warm_balancer(size_t n) {
  const std::vector<std::string>& warm = warm_texts();
  static SeededRandom random(2);
  static std::map<size_t, std::unique_ptr<CacheAwareBalancer>> balancers;
  auto& lb = balancers[n];
  if (!lb) {
    lb = std::make_unique<CacheAwareBalancer>(n, random);
    for (size_t i = 0; i < warm.size(); ++i) lb->observe(i % n, context(warm[i]));
  }
  return *lb;
}

void bm_pick(benchmark::State& state, bool novel) {
  const size_t n = static_cast<size_t>(state.range(0));
  CacheAwareBalancer& lb = warm_balancer(n);
  LoadsFixture loads(n);
  for (size_t i = 0; i < n; ++i) loads.set(i, static_cast<uint32_t>((i * 7) % 5));
  // A known conversation, or one that parts from it right after the shared system prompt.
  std::string prompt = warm_texts()[kConversations / 2];
  if (novel) prompt[kSystemBytes] = '#';
  const RouteContext ctx = context(prompt);
  for (auto _ : state) {
    const auto idx = lb.pick(ctx, loads.view());
    benchmark::DoNotOptimize(idx);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["nodes"] = static_cast<double>(lb.tree().node_count());
}

// A tree of 8 candidates filled to its node cap with 32 KiB conversations.
PrefixTree& full_tree() {
  static PrefixTree tree(8);
  static bool filled = false;
  if (!filled) {
    SeededRandom random(3);
    std::string prompt;
    for (size_t i = 0; tree.node_count() < tree.options().max_nodes; ++i) {
      prompt.clear();
      append_text(random, kPromptBytes, prompt);
      tree.insert(prompt, i % 8);
    }
    filled = true;
  }
  return tree;
}

void bm_insert(benchmark::State& state, bool novel) {
  PrefixTree& tree = full_tree();
  std::string prompt = conversations(1, 4)[0];
  tree.insert(prompt, 0);
  uint64_t counter = 0;
  for (auto _ : state) {
    if (novel) {
      // A new conversation under the shared system prompt: about 480 new nodes, as many evicted.
      ++counter;
      std::memcpy(prompt.data() + kSystemBytes, &counter, sizeof counter);
    }
    tree.insert(prompt, counter % 8);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["nodes"] = static_cast<double>(tree.node_count());
}

void bm_memory_per_million_nodes(benchmark::State& state) {
  PrefixTree& tree = full_tree();
  for (auto _ : state) benchmark::DoNotOptimize(tree.node_count());
  const double bytes = static_cast<double>(tree.memory_bytes());
  const double nodes = static_cast<double>(tree.node_count());
  state.counters["bytes"] = bytes;
  state.counters["nodes"] = nodes;
  state.counters["bytes_per_node"] = bytes / nodes;
}

BENCHMARK_CAPTURE(bm_pick, warm_32k, false)->Arg(8)->Arg(64);
BENCHMARK_CAPTURE(bm_pick, novel_32k, true)->Arg(8)->Arg(64);
BENCHMARK_CAPTURE(bm_insert, known_32k, false);
BENCHMARK_CAPTURE(bm_insert, novel_32k_at_cap, true);
BENCHMARK(bm_memory_per_million_nodes)->Iterations(1);

}  // namespace
}  // namespace rolter
