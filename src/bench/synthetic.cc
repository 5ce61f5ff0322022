#include "bench/synthetic.h"

#include <algorithm>
#include <cmath>

#include "common/random.h"

namespace rolter::bench {
namespace {

// Block ids of system prompts and of sessions live in disjoint ranges, so a session's own text
// can never look like another session's or like a system prompt.
constexpr uint64_t kSessionIdBase = 1ULL << 40;

double exponential(Random& rng, double mean) {
  // 1 - u is in (0, 1], so the log is finite.
  return -mean * std::log(1.0 - rng.uniform_double());
}

}  // namespace

std::vector<TraceRequest> generate_synthetic(const SyntheticOptions& o) {
  SeededRandom rng(o.seed);
  std::vector<TraceRequest> out;
  out.reserve(o.sessions * o.turns);
  const size_t prompts = std::max<size_t>(o.system_prompts, 1);
  // An answer joins the conversation as whole blocks, rounded up, so later turns stay aligned.
  const size_t answer_blocks = (o.output_tokens + kTraceBlockTokens - 1) / kTraceBlockTokens;
  uint64_t next_block = kSessionIdBase;
  double session_start = 0;
  for (size_t s = 0; s < o.sessions; ++s) {
    session_start += o.session_rate > 0 ? exponential(rng, 1000.0 / o.session_rate) : 0;
    const size_t system = rng.uniform(prompts);
    std::vector<uint64_t> history;
    for (size_t b = 0; b < o.system_prompt_blocks; ++b) history.push_back(system * 1024 + b);
    double t = session_start;
    for (size_t turn = 0; turn < o.turns; ++turn) {
      if (turn > 0) {
        t += exponential(rng, o.think_time_ms);
        for (size_t b = 0; b < answer_blocks; ++b) history.push_back(next_block++);
      }
      for (size_t b = 0; b < o.user_blocks; ++b) history.push_back(next_block++);
      TraceRequest req;
      req.timestamp_ms = static_cast<int64_t>(t);
      req.hash_ids = history;
      // The user's last block is partial: between 64 and 512 tokens of it are sent.
      const size_t tail = 64 + rng.uniform(kTraceBlockTokens - 64 + 1);
      req.input_length = static_cast<uint32_t>((history.size() - 1) * kTraceBlockTokens + tail);
      req.output_length = o.output_tokens;
      req.session = "s" + std::to_string(s);
      out.push_back(std::move(req));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const TraceRequest& a, const TraceRequest& b) {
    return a.timestamp_ms < b.timestamp_ms;
  });
  return out;
}

}  // namespace rolter::bench
