#include "bench/overhead/aggregate.h"

#include <algorithm>

namespace rolter::bench::overhead {
namespace {

Percentiles minus(const Percentiles& a, const Percentiles& b) {
  return {a.p50 - b.p50, a.p99 - b.p99, a.p999 - b.p999};
}

}  // namespace

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::optional<SameRoundRatio> same_round_ratio(const PathResult& path, const PathResult& base,
                                               std::optional<double> (*pick)(const Figures&)) {
  std::vector<double> ratios;
  for (size_t i = 0; i < path.rounds.size() && i < base.rounds.size(); ++i) {
    const std::optional<double> mine = pick(path.rounds[i]);
    const std::optional<double> theirs = pick(base.rounds[i]);
    if (!mine || !theirs || !(*theirs > 0)) continue;
    ratios.push_back(*mine / *theirs);
  }
  if (ratios.empty()) return std::nullopt;
  const auto [low, high] = std::minmax_element(ratios.begin(), ratios.end());
  return SameRoundRatio{
      .median = median(ratios), .min = *low, .max = *high, .rounds = ratios.size()};
}

void compute_added(std::vector<PathResult>& paths, size_t direct_index) {
  const std::vector<Figures> direct = paths.at(direct_index).rounds;
  for (PathResult& p : paths) {
    for (size_t r = 0; r < p.rounds.size() && r < direct.size(); ++r) {
      p.rounds[r].added_latency = minus(p.rounds[r].latency, direct[r].latency);
      p.rounds[r].added_ttft = minus(p.rounds[r].ttft, direct[r].ttft);
    }
  }
}

Figures median_figures(const std::vector<Figures>& rounds) {
  Figures m;
  auto med = [&](auto field) {
    std::vector<double> v;
    for (const Figures& f : rounds) v.push_back(field(f));
    return median(std::move(v));
  };
  auto med_p = [&](auto pick) {
    return Percentiles{med([&](const Figures& f) { return pick(f).p50; }),
                       med([&](const Figures& f) { return pick(f).p99; }),
                       med([&](const Figures& f) { return pick(f).p999; })};
  };
  m.latency = med_p([](const Figures& f) -> const Percentiles& { return f.latency; });
  m.ttft = med_p([](const Figures& f) -> const Percentiles& { return f.ttft; });
  m.added_latency = med_p([](const Figures& f) -> const Percentiles& { return f.added_latency; });
  m.added_ttft = med_p([](const Figures& f) -> const Percentiles& { return f.added_ttft; });
  m.rps_c32 = med([](const Figures& f) { return f.rps_c32; });
  m.rps_c256 = med([](const Figures& f) { return f.rps_c256; });
  m.max_sustainable_rps = med([](const Figures& f) { return f.max_sustainable_rps; });
  m.p99_bound_us = med([](const Figures& f) { return f.p99_bound_us; });
  std::vector<double> cpu;
  for (const Figures& f : rounds) {
    if (f.cpu_s_per_10k) cpu.push_back(*f.cpu_s_per_10k);
  }
  if (!cpu.empty()) m.cpu_s_per_10k = median(cpu);
  for (const Figures& f : rounds) {
    m.latency_errors += f.latency_errors;
    m.ttft_errors += f.ttft_errors;
    m.c32_errors += f.c32_errors;
    m.c256_errors += f.c256_errors;
  }
  return m;
}

}  // namespace rolter::bench::overhead
