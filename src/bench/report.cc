#include "bench/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

namespace rolter::bench {
namespace {

std::string percent(double ratio) { return fixed(ratio * 100.0, 1) + "%"; }

// An ITL percentile, or n/a when no answer had two tokens.
std::string itl(double ms, const StrategyResult& s) {
  return s.itl_samples ? fixed(ms, 2) : std::string("n/a");
}

nlohmann::ordered_json tenants_json(const std::vector<TenantResult>& tenants) {
  auto arr = nlohmann::ordered_json::array();
  for (const TenantResult& t : tenants) {
    arr.push_back({{"tenant", t.tenant},
                   {"priority", t.priority},
                   {"share", t.share},
                   {"sent", t.sent},
                   {"served", t.served},
                   {"shed", t.shed},
                   {"errors", t.errors},
                   {"shed_rate", t.shed_rate},
                   {"ttft_p50_ms", t.ttft_p50_ms},
                   {"ttft_p99_ms", t.ttft_p99_ms}});
  }
  return arr;
}

// The per-tenant table of a --tenants replay: one row per strategy and tenant.
void tenants_markdown(const ReplayReport& r, std::ostringstream& o) {
  o << "\nPer tenant (flow control " << r.flow_control
    << "; the errors above include the shed requests):\n\n";
  o << "| strategy | tenant | band | share | sent | served | shed (429) | shed rate | other "
       "errors | TTFT p50 ms | TTFT p99 ms |\n";
  o << "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const StrategyResult& s : r.results) {
    for (const TenantResult& t : s.tenants) {
      o << "| " << s.strategy << " | " << t.tenant << " | " << t.priority << " | "
        << percent(t.share) << " | " << t.sent << " | " << t.served << " | " << t.shed << " | "
        << percent(t.shed_rate) << " | " << t.errors << " | " << fixed(t.ttft_p50_ms, 1) << " | "
        << fixed(t.ttft_p99_ms, 1) << " |\n";
    }
  }
}

}  // namespace

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string xml(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string machine_description() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      if (auto colon = line.find(':'); colon != std::string::npos) {
        model = line.substr(colon + 1);
        model.erase(0, model.find_first_not_of(" \t"));
      }
      break;
    }
  }
  return std::to_string(std::thread::hardware_concurrency()) + " cores, " + model;
}

std::string current_commit() {
  FILE* p = ::popen("git rev-parse HEAD 2>/dev/null", "r");
  if (!p) return "unknown";
  char buf[128] = {};
  std::string out;
  if (std::fgets(buf, sizeof buf, p)) out = buf;
  ::pclose(p);
  while (!out.empty() && std::isspace(static_cast<unsigned char>(out.back()))) out.pop_back();
  return out.size() == 40 ? out : "unknown";
}

std::string command_line(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) {
    std::string_view a = argv[i];
    if (i) out += ' ';
    const bool plain =
        !a.empty() &&
        a.find_first_not_of(
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,@+") ==
            std::string_view::npos;
    if (plain) {
      out += a;
    } else {
      out += '\'';
      for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
      out += '\'';
    }
  }
  return out;
}

std::string render_json(const ReplayReport& r) {
  nlohmann::ordered_json j;
  j["mode"] = r.mode;
  j["trace"] = r.trace;
  j["requests"] = r.requests;
  j["fleet"] = r.fleet;
  j["machine"] = r.machine;
  j["commit"] = r.commit;
  j["command"] = r.command;
  if (!r.flow_control.empty()) j["flow_control"] = r.flow_control;
  j["ideal_hit_ratio"] = r.ideal.ratio();
  j["pooled_bound_hit_ratio"] = r.pooled.ratio();
  j["pooled_bound_capacity_blocks"] = r.pooled_capacity_blocks;
  j["wall_s"] = r.wall_s;
  auto& arr = j["strategies"] = nlohmann::ordered_json::array();
  for (const StrategyResult& s : r.results) {
    arr.push_back({{"strategy", s.strategy},
                   {"requests", s.requests},
                   {"errors", s.errors},
                   {"hit_tokens", s.hit_tokens},
                   {"query_tokens", s.query_tokens},
                   {"hit_ratio", s.hit_ratio},
                   {"of_pooled_bound", s.of_pooled_bound},
                   {"ttft_p50_ms", s.ttft_p50_ms},
                   {"ttft_p99_ms", s.ttft_p99_ms},
                   {"itl_p50_ms", s.itl_p50_ms},
                   {"itl_p99_ms", s.itl_p99_ms},
                   {"itl_samples", s.itl_samples},
                   {"split_requests", s.split_requests},
                   {"e2e_p50_ms", s.e2e_p50_ms},
                   {"e2e_p99_ms", s.e2e_p99_ms},
                   {"req_per_s", s.req_per_s},
                   {"output_tok_per_s", s.output_tok_per_s},
                   {"imbalance_mean", s.imbalance_mean},
                   {"imbalance_peak", s.imbalance_peak},
                   {"window_imbalance_median", s.window_imbalance},
                   {"window_imbalances", s.window_imbalances},
                   {"duration_s", s.duration_s},
                   {"wall_s", s.wall_s},
                   {"served_per_gateway", s.served_per_gateway}});
    if (!s.tenants.empty()) arr.back()["tenants"] = tenants_json(s.tenants);
  }
  return j.dump(2) + "\n";
}

std::string render_markdown(const ReplayReport& r) {
  std::ostringstream o;
  o << "Replay (" << r.mode << "): " << r.trace << ", " << r.requests << " requests; fleet "
    << r.fleet << "\n\n";
  o << "- ideal hit ratio (unbounded shared cache): " << percent(r.ideal.ratio()) << "\n";
  o << "- pooled-cache bound (one LRU of " << r.pooled_capacity_blocks
    << " blocks of 512 tokens): " << percent(r.pooled.ratio()) << "\n";
  if (!r.flow_control.empty()) o << "- flow control: " << r.flow_control << "\n";
  o << "\n";
  o << "| strategy | hit ratio | of bound | TTFT p50 ms | TTFT p99 ms | ITL p50 ms | ITL p99 ms "
       "| E2E p50 ms | E2E p99 ms | req/s | out tok/s | imbalance mean | imbalance peak | 60 s "
       "window imbalance | errors | wall s |\n";
  o << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const StrategyResult& s : r.results) {
    o << "| " << s.strategy << " | " << percent(s.hit_ratio) << " | " << percent(s.of_pooled_bound)
      << " | " << fixed(s.ttft_p50_ms, 1) << " | " << fixed(s.ttft_p99_ms, 1) << " | "
      << itl(s.itl_p50_ms, s) << " | " << itl(s.itl_p99_ms, s) << " | " << fixed(s.e2e_p50_ms, 1)
      << " | " << fixed(s.e2e_p99_ms, 1) << " | " << fixed(s.req_per_s, 2) << " | "
      << fixed(s.output_tok_per_s, 0) << " | " << fixed(s.imbalance_mean, 2) << " | "
      << fixed(s.imbalance_peak, 2) << " | "
      << (s.window_imbalance > 0 ? fixed(s.window_imbalance, 2) : std::string("n/a")) << " | "
      << s.errors << " | " << fixed(s.wall_s, 1) << " |\n";
  }
  const bool any_tenants = std::any_of(r.results.begin(), r.results.end(),
                                       [](const StrategyResult& s) { return !s.tenants.empty(); });
  if (any_tenants) tenants_markdown(r, o);
  o << "\nMachine: " << r.machine << "  \nCommit: " << r.commit << "  \nCommand: `" << r.command
    << "`  \nTotal wall time: " << fixed(r.wall_s, 1) << " s\n";
  return o.str();
}

std::string render_svg(const ReplayReport& r) {
  // Three panels side by side, one bar per run: hit ratio (with the ideal and pooled-bound
  // lines), TTFT p99 and ITL p99 (aggregated and disaggregated runs side by side). Plain SVG so
  // it renders anywhere, including on a code host.
  constexpr int kPanelW = 360, kPanelH = 240, kMargin = 50, kTop = 50;
  const int n = static_cast<int>(r.results.size());
  // Room on the right for the last panel's rotated labels.
  const int width = 3 * (kPanelW + kMargin) + kMargin + 220;
  // Room below the panels for the rotated labels ("pd 2:6 (precise_cache_aware/least load)").
  const int height = kTop + kPanelH + 200;
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  o << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o << "<text x=\"" << kMargin << "\" y=\"22\" font-size=\"15\">" << xml(r.trace) << " ("
    << r.requests << " requests, " << xml(r.mode) << ")</text>\n";

  auto panel = [&](int x0, const std::string& title, double max_value, auto value, auto label,
                   const char* color) {
    o << "<text x=\"" << x0 << "\" y=\"" << kTop - 8 << "\" font-weight=\"bold\">" << xml(title)
      << "</text>\n";
    o << "<line x1=\"" << x0 << "\" y1=\"" << kTop + kPanelH << "\" x2=\"" << x0 + kPanelW
      << "\" y2=\"" << kTop + kPanelH << "\" stroke=\"black\"/>\n";
    const double slot = n ? static_cast<double>(kPanelW) / n : kPanelW;
    for (int i = 0; i < n; ++i) {
      const StrategyResult& s = r.results[i];
      const double v = value(s);
      const double h = max_value > 0 ? v / max_value * (kPanelH - 20) : 0;
      const double x = x0 + i * slot + slot * 0.15;
      o << "<rect x=\"" << fixed(x, 1) << "\" y=\"" << fixed(kTop + kPanelH - h, 1) << "\" width=\""
        << fixed(slot * 0.7, 1) << "\" height=\"" << fixed(h, 1) << "\" fill=\"" << color
        << "\"/>\n";
      o << "<text x=\"" << fixed(x + slot * 0.35, 1) << "\" y=\""
        << fixed(kTop + kPanelH - h - 4, 1) << "\" text-anchor=\"middle\">" << xml(label(s))
        << "</text>\n";
      o << "<text transform=\"translate(" << fixed(x + slot * 0.35, 1) << "," << kTop + kPanelH + 14
        << ") rotate(30)\">" << xml(s.strategy) << "</text>\n";
    }
  };

  // Hit-ratio panel: 0..100% with reference lines.
  const int x_hit = kMargin;
  panel(
      x_hit, "prefix-cache hit ratio (tokens)", 1.0,
      [](const StrategyResult& s) { return s.hit_ratio; },
      [](const StrategyResult& s) { return percent(s.hit_ratio); }, "#4477aa");
  auto ref_line = [&](double ratio, const char* color, const std::string& text) {
    const double y = kTop + kPanelH - ratio * (kPanelH - 20);
    o << "<line x1=\"" << x_hit << "\" y1=\"" << fixed(y, 1) << "\" x2=\"" << x_hit + kPanelW
      << "\" y2=\"" << fixed(y, 1) << "\" stroke=\"" << color << "\" stroke-dasharray=\"5,3\"/>\n";
    o << "<text x=\"" << x_hit + kPanelW - 2 << "\" y=\"" << fixed(y - 3, 1)
      << "\" text-anchor=\"end\" fill=\"" << color << "\">" << xml(text) << "</text>\n";
  };
  ref_line(r.ideal.ratio(), "#228833", "ideal " + percent(r.ideal.ratio()));
  ref_line(r.pooled.ratio(), "#cc6677", "pooled bound " + percent(r.pooled.ratio()));

  // TTFT spans orders of magnitude when a run falls behind (a starved disaggregated split): then a
  // log scale, from half the lowest value, keeps the other bars readable.
  double max_ttft = 0, min_ttft = 0;
  for (const StrategyResult& s : r.results) {
    max_ttft = std::max(max_ttft, s.ttft_p99_ms);
    if (s.ttft_p99_ms > 0 && (min_ttft == 0 || s.ttft_p99_ms < min_ttft)) min_ttft = s.ttft_p99_ms;
  }
  const bool log_ttft = min_ttft > 0 && max_ttft / min_ttft > 20;
  const double ttft_floor = log_ttft ? std::log10(min_ttft / 2) : 0;
  panel(
      x_hit + kPanelW + kMargin, log_ttft ? "TTFT p99 (ms, log scale)" : "TTFT p99 (ms)",
      log_ttft ? std::log10(max_ttft) - ttft_floor : max_ttft,
      [&](const StrategyResult& s) {
        if (!log_ttft) return s.ttft_p99_ms;
        return s.ttft_p99_ms > 0 ? std::log10(s.ttft_p99_ms) - ttft_floor : 0.0;
      },
      [](const StrategyResult& s) { return fixed(s.ttft_p99_ms, 0); }, "#ee7733");
  double max_itl = 0;
  for (const StrategyResult& s : r.results) max_itl = std::max(max_itl, s.itl_p99_ms);
  panel(
      x_hit + 2 * (kPanelW + kMargin), "ITL p99 (ms)", max_itl,
      [](const StrategyResult& s) { return s.itl_p99_ms; },
      [](const StrategyResult& s) { return fixed(s.itl_p99_ms, 1); }, "#009988");
  o << "<text x=\"" << kMargin << "\" y=\"" << height - 10 << "\" fill=\"#555\">" << xml(r.fleet)
    << "; commit " << xml(r.commit.substr(0, 12)) << "</text>\n";
  o << "</svg>\n";
  return o.str();
}

bool write_report_file(const std::string& path, const std::string& text, const char* program) {
  std::ofstream out(path);
  out << text;
  if (!out) {
    std::fprintf(stderr, "%s: cannot write %s\n", program, path.c_str());
    return false;
  }
  return true;
}

}  // namespace rolter::bench
