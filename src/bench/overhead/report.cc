#include "bench/overhead/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench/overhead/aggregate.h"
#include "bench/report.h"

namespace rolter::bench::overhead {
namespace {

using nlohmann::json;

std::string us(double v) { return fixed(v, 0); }
std::string signed_us(double v) { return (v > 0 ? "+" : "") + fixed(v, 0); }

json percentiles_json(const Percentiles& p) {
  return {{"p50", p.p50}, {"p99", p.p99}, {"p999", p.p999}};
}

json optional_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json figures_json(const Figures& f, double direct_c32) {
  json j = {{"latency_us", percentiles_json(f.latency)},
            {"ttft_us", percentiles_json(f.ttft)},
            {"added_latency_us", percentiles_json(f.added_latency)},
            {"added_ttft_us", percentiles_json(f.added_ttft)},
            {"throughput_rps", {{"c32", f.rps_c32}, {"c256", f.rps_c256}}},
            {"throughput_c32_vs_direct", direct_c32 > 0 ? json(f.rps_c32 / direct_c32) : json()},
            {"max_sustainable_rps", f.max_sustainable_rps},
            {"p99_bound_us", f.p99_bound_us},
            {"cpu_s_per_10k_requests", optional_json(f.cpu_s_per_10k)},
            {"errors",
             {{"latency", f.latency_errors},
              {"ttft", f.ttft_errors},
              {"throughput_c32", f.c32_errors},
              {"throughput_c256", f.c256_errors},
              {"total", f.errors()}}}};
  if (!f.probes.empty()) {
    json probes = json::array();
    for (const ProbeRecord& p : f.probes) {
      probes.push_back({{"rps", p.rps},
                        {"p99_ms", p.outcome.p99_ms},
                        {"errors", p.outcome.errors},
                        {"requests", p.outcome.requests},
                        {"passed", p.passed}});
    }
    j["probes"] = probes;
  }
  return j;
}

double direct_c32(const OverheadReport& r, bool median, size_t round) {
  for (const PathResult& p : r.paths) {
    if (p.kind != "direct") continue;
    if (median) return p.median.rps_c32;
    return round < p.rounds.size() ? p.rounds[round].rps_c32 : 0;
  }
  return 0;
}

std::string mb(const std::optional<double>& v) { return v ? fixed(*v, 1) : "n/a"; }

std::string rps(double v) { return v > 0 ? fixed(v, 0) : "0"; }

std::optional<double> cpu_of(const Figures& f) { return f.cpu_s_per_10k; }
std::optional<double> c32_of(const Figures& f) { return f.rps_c32; }

// The nginx proxy path, when the run measured one.
const PathResult* nginx_path(const OverheadReport& r) {
  for (const PathResult& p : r.paths) {
    if (p.kind == "nginx") return &p;
  }
  return nullptr;
}

// Whether `p` is compared with nginx round by round: a proxy path other than nginx itself.
bool compared_with_nginx(const PathResult& p) { return p.kind != "direct" && p.kind != "nginx"; }

json ratio_json(const std::optional<SameRoundRatio>& r) {
  if (!r) return nullptr;
  return {{"median", r->median}, {"min", r->min}, {"max", r->max}, {"rounds", r->rounds}};
}

std::string ratio_cell(const std::optional<SameRoundRatio>& r) {
  if (!r) return "n/a";
  return fixed(r->median, 2) + " (" + fixed(r->min, 2) + " to " + fixed(r->max, 2) + ")";
}

}  // namespace

std::string render_json(const OverheadReport& r) {
  const OverheadOptions& o = r.options;
  json j = {{"benchmark", "overhead"},
            {"machine", r.machine},
            {"commit", r.commit},
            {"command", r.command},
            {"upstream", r.upstream},
            {"load_generators", r.load_generators},
            {"notes", r.notes},
            {"wall_s", r.wall_s},
            {"settings",
             {{"rounds", o.rounds},
              {"workers", o.workers},
              {"upstream_workers", o.upstream_workers},
              {"latency_requests", o.latency_requests},
              {"warmup", o.warmup},
              {"duration_s", o.duration_s},
              {"probe_seconds", o.probe_seconds},
              {"max_probes", o.max_probes},
              {"p99_factor", o.p99_factor},
              {"p99_floor_ms", o.p99_floor_ms},
              {"stream_chunks", o.stream_chunks},
              {"wrk_threads", o.wrk_threads},
              {"quick", o.quick}}}};
  const PathResult* nginx = nginx_path(r);
  json paths = json::array();
  for (const PathResult& p : r.paths) {
    json pj = figures_json(p.median, direct_c32(r, true, 0));
    pj["name"] = p.name;
    pj["kind"] = p.kind;
    pj["url"] = p.url;
    pj["workers"] = p.workers;
    pj["measured_process"] = p.measured_process;
    pj["pids"] = p.pids;
    pj["idle_rss_mb"] = optional_json(p.idle_rss_mb);
    pj["peak_rss_mb"] = optional_json(p.peak_rss_mb);
    if (!p.no_streaming.empty()) pj["no_streaming"] = p.no_streaming;
    json rounds = json::array();
    for (size_t i = 0; i < p.rounds.size(); ++i) {
      rounds.push_back(figures_json(p.rounds[i], direct_c32(r, false, i)));
    }
    pj["rounds"] = rounds;
    if (nginx != nullptr && compared_with_nginx(p)) {
      pj["vs_nginx_same_round"] = {
          {"cpu_per_request", ratio_json(same_round_ratio(p, *nginx, cpu_of))},
          {"throughput_c32", ratio_json(same_round_ratio(p, *nginx, c32_of))}};
    }
    paths.push_back(pj);
  }
  j["paths"] = paths;
  return j.dump(2) + "\n";
}

std::string render_markdown(const OverheadReport& r) {
  std::ostringstream o;
  o << "## Gateway overhead\n\n";
  o << "Latency at concurrency 1, microseconds (median of " << r.options.rounds
    << " round(s)); \"added\" is the path minus direct in the same round.\n\n";
  o << "| Path | Workers | Latency p50 / p99 / p99.9 | Added p50 / p99 / p99.9 | "
       "TTFT p50 / p99 / p99.9 | Added TTFT p50 / p99 / p99.9 |\n";
  o << "|---|---|---|---|---|---|\n";
  for (const PathResult& p : r.paths) {
    const Figures& f = p.median;
    if (!p.no_streaming.empty()) {
      o << "| " << p.name << " | " << p.workers << " | " << us(f.latency.p50) << " / "
        << us(f.latency.p99) << " / " << us(f.latency.p999) << " | "
        << signed_us(f.added_latency.p50) << " / " << signed_us(f.added_latency.p99) << " / "
        << signed_us(f.added_latency.p999) << " | n/a | n/a |\n";
      continue;
    }
    o << "| " << p.name << " | " << p.workers << " | " << us(f.latency.p50) << " / "
      << us(f.latency.p99) << " / " << us(f.latency.p999) << " | " << signed_us(f.added_latency.p50)
      << " / " << signed_us(f.added_latency.p99) << " / " << signed_us(f.added_latency.p999)
      << " | " << us(f.ttft.p50) << " / " << us(f.ttft.p99) << " / " << us(f.ttft.p999) << " | "
      << signed_us(f.added_ttft.p50) << " / " << signed_us(f.added_ttft.p99) << " / "
      << signed_us(f.added_ttft.p999) << " |\n";
  }
  const double d32 = direct_c32(r, true, 0);
  o << "\nThroughput (req/s, non-streaming; wrk, closed loop), maximum sustainable rate (open "
       "loop, p99 within "
    << fixed(r.options.p99_factor, 1) << "x the path's concurrency-1 p99 but at least "
    << fixed(r.options.p99_floor_ms, 1)
    << " ms, no errors), CPU and memory of the process that serves "
       "the path.\n\n";
  o << "| Path | req/s c=32 | vs direct | req/s c=256 | Max sustainable req/s (p99 bound, us) | "
       "CPU s / 10k req | RSS idle / peak (MB) | Errors | Measured process |\n";
  o << "|---|---|---|---|---|---|---|---|---|\n";
  for (const PathResult& p : r.paths) {
    const Figures& f = p.median;
    o << "| " << p.name << " | " << rps(f.rps_c32) << " | "
      << (d32 > 0 ? fixed(100.0 * f.rps_c32 / d32, 0) + "%" : "n/a") << " | " << rps(f.rps_c256)
      << " | " << rps(f.max_sustainable_rps) << " (" << us(f.p99_bound_us) << ") | "
      << (f.cpu_s_per_10k ? fixed(*f.cpu_s_per_10k, 3) : "n/a") << " | " << mb(p.idle_rss_mb)
      << " / " << mb(p.peak_rss_mb) << " | " << f.errors() << " | " << p.measured_process << " |\n";
  }
  const PathResult* nginx = nginx_path(r);
  if (nginx != nullptr && std::any_of(r.paths.begin(), r.paths.end(), compared_with_nginx)) {
    o << "\nSame-round ratios to nginx: a path's figure over nginx's from the same round, so "
         "that the machine's drift between rounds cancels (median over rounds, then the lowest "
         "and the highest round).\n\n";
    o << "| Path | CPU per request vs nginx | req/s c=32 vs nginx |\n";
    o << "|---|---|---|\n";
    for (const PathResult& p : r.paths) {
      if (!compared_with_nginx(p)) continue;
      o << "| " << p.name << " | " << ratio_cell(same_round_ratio(p, *nginx, cpu_of)) << " | "
        << ratio_cell(same_round_ratio(p, *nginx, c32_of)) << " |\n";
    }
  }
  o << "\n";
  for (const std::string& n : r.notes) o << "- " << n << "\n";
  for (const PathResult& p : r.paths) {
    if (!p.no_streaming.empty()) o << "- " << p.name << ": no TTFT, " << p.no_streaming << ".\n";
  }
  o << "\nMachine: " << r.machine << "  \nCommit: " << r.commit << "  \nCommand: `" << r.command
    << "`  \nUpstream: " << r.upstream << "  \nLoad generators: " << r.load_generators
    << "  \nWorkers: rolter, nginx and haproxy (threads) " << r.options.workers << ", upstream "
    << r.options.upstream_workers << ", peers as started  \nRounds: " << r.options.rounds
    << ", total wall time " << fixed(r.wall_s, 1) << " s\n";
  return o.str();
}

std::string render_svg(const OverheadReport& r) {
  // Two panels: added latency p50 and p99 per path (grouped bars), and c=32 throughput as a
  // share of direct's. Plain SVG so it renders anywhere, including on a code host.
  constexpr int kPanelW = 380, kPanelH = 240, kMargin = 60, kTop = 60;
  const int n = static_cast<int>(r.paths.size());
  const int width = 2 * (kPanelW + kMargin) + kMargin;
  const int height = kTop + kPanelH + 80;
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  o << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o << "<text x=\"" << kMargin << "\" y=\"24\" font-size=\"15\">Gateway overhead ("
    << r.options.rounds << " round(s), " << r.options.workers << " worker(s))</text>\n";
  const double slot = n ? static_cast<double>(kPanelW) / n : kPanelW;
  auto axis = [&](int x0, const std::string& title) {
    o << "<text x=\"" << x0 << "\" y=\"" << kTop - 10 << "\" font-weight=\"bold\">" << xml(title)
      << "</text>\n";
    o << "<line x1=\"" << x0 << "\" y1=\"" << kTop + kPanelH << "\" x2=\"" << x0 + kPanelW
      << "\" y2=\"" << kTop + kPanelH << "\" stroke=\"black\"/>\n";
  };
  auto bar = [&](double x, double w, double h, const char* color, const std::string& label) {
    h = std::max(h, 0.0);
    o << "<rect x=\"" << fixed(x, 1) << "\" y=\"" << fixed(kTop + kPanelH - h, 1) << "\" width=\""
      << fixed(w, 1) << "\" height=\"" << fixed(h, 1) << "\" fill=\"" << color << "\"/>\n";
    o << "<text x=\"" << fixed(x + w / 2, 1) << "\" y=\"" << fixed(kTop + kPanelH - h - 4, 1)
      << "\" text-anchor=\"middle\" font-size=\"10\">" << xml(label) << "</text>\n";
  };
  auto name = [&](int x0, int i) {
    o << "<text x=\"" << fixed(x0 + (i + 0.5) * slot, 1) << "\" y=\"" << kTop + kPanelH + 16
      << "\" text-anchor=\"middle\">" << xml(r.paths[i].name) << "</text>\n";
  };

  double max_added = 1;
  for (const PathResult& p : r.paths) {
    max_added = std::max({max_added, p.median.added_latency.p50, p.median.added_latency.p99});
  }
  // A log scale: a slow peer's milliseconds would flatten the microsecond bars of the others.
  axis(kMargin, "added latency at c=1 (us, log scale): p50, p99");
  auto latency_height = [&](double us) {
    return std::log10(1 + std::max(us, 0.0)) / std::log10(1 + max_added) * (kPanelH - 20);
  };
  for (int i = 0; i < n; ++i) {
    const Figures& f = r.paths[i].median;
    const double x = kMargin + i * slot + slot * 0.1;
    bar(x, slot * 0.4, latency_height(f.added_latency.p50), "#4477aa",
        signed_us(f.added_latency.p50));
    bar(x + slot * 0.4, slot * 0.4, latency_height(f.added_latency.p99), "#ee7733",
        signed_us(f.added_latency.p99));
    name(kMargin, i);
  }
  const int x2 = kMargin + kPanelW + kMargin;
  const double d32 = direct_c32(r, true, 0);
  axis(x2, "throughput at c=32, % of direct");
  for (int i = 0; i < n; ++i) {
    const double share = d32 > 0 ? r.paths[i].median.rps_c32 / d32 : 0;
    const double h = std::min(share, 1.2) / 1.2 * (kPanelH - 20);
    bar(x2 + i * slot + slot * 0.2, slot * 0.6, h, "#228833", fixed(100 * share, 0) + "%");
    name(x2, i);
  }
  o << "<rect x=\"" << kMargin << "\" y=\"" << height - 38 << "\" width=\"10\" height=\"10\" "
    << "fill=\"#4477aa\"/><text x=\"" << kMargin + 14 << "\" y=\"" << height - 29
    << "\">p50</text><rect x=\"" << kMargin + 50 << "\" y=\"" << height - 38
    << "\" width=\"10\" height=\"10\" fill=\"#ee7733\"/><text x=\"" << kMargin + 64 << "\" y=\""
    << height - 29 << "\">p99</text>\n";
  o << "<text x=\"" << kMargin << "\" y=\"" << height - 10 << "\" fill=\"#555\">" << xml(r.machine)
    << "; commit " << xml(r.commit.substr(0, 12)) << "</text>\n";
  o << "</svg>\n";
  return o.str();
}

}  // namespace rolter::bench::overhead
