// The search for the maximum sustainable rate: the highest offered rate (requests per second,
// open loop) whose probe passes, i.e. p99 within the bound and no error. It starts at a rate
// below the closed-loop throughput, steps geometrically (up while probes pass, down while they
// fail) until a passing and a failing rate bracket the answer, then bisects the bracket, within a
// fixed number of probes, so its total time is bounded.
//
// The probe is injected: the bench runs an open-loop load, tests pass a function of the rate.
//
// Thread-safety: pure function of its arguments and the probe's answers.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace rolter::bench::overhead {

struct ProbeOutcome {
  double p99_ms = 0;
  uint64_t errors = 0;  // failed requests, plus requests never sent or answered by the deadline
  uint64_t requests = 0;
};

struct RateSearchOptions {
  double start_rps = 1000;
  double growth = 2.0;      // geometric step while bracketing
  double precision = 0.05;  // stop bisecting when high / low <= 1 + precision
  int max_probes = 10;      // total probes, bracketing and bisection together
  double min_rps = 10;      // below this the answer is 0
  double max_rps = 1e7;     // the bracket's ceiling
  double p99_bound_ms = 1;  // a probe passes when p99 <= this and errors == 0
};

struct ProbeRecord {
  double rps = 0;
  ProbeOutcome outcome;
  bool passed = false;
};

struct RateSearchResult {
  double max_rps = 0;  // the highest passing rate; 0 when none passed
  std::vector<ProbeRecord> probes;
};

using ProbeFn = std::function<ProbeOutcome(double rps)>;

RateSearchResult search_max_rate(const RateSearchOptions& options, const ProbeFn& probe);

}  // namespace rolter::bench::overhead
