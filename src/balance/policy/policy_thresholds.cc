#include "balance/policy/policy_thresholds.h"

#include <nlohmann/json.hpp>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace rolter {
namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

tl::expected<size_t, std::string> parse_count(std::string_view text) {
  text = trim(text);
  size_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    return tl::unexpected("\"" + std::string(text) + "\" is not a whole number");
  }
  if (value < 2 || value > kMaxThresholdTargets) {
    return tl::unexpected("target count " + std::to_string(value) + " is outside 2.." +
                          std::to_string(kMaxThresholdTargets) +
                          " (a session can only move with at least 2 targets)");
  }
  return value;
}

tl::expected<double, std::string> parse_weight(std::string_view text, std::string_view ratio) {
  text = trim(text);
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value) || value <= 0) {
    return tl::unexpected("ratio \"" + std::string(ratio) + "\": \"" + std::string(text) +
                          "\" is not a weight > 0");
  }
  return value;
}

std::string shortest(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", value);
  return buffer;
}

std::string cell(const FlipThreshold& t) {
  std::string text = t.flip ? std::to_string(*t.flip) : "never";
  if (t.tie_at) text += " (tie at " + std::to_string(*t.tie_at) + ")";
  return text;
}

}  // namespace

tl::expected<std::vector<size_t>, std::string> parse_target_range(std::string_view text) {
  const size_t dots = text.find("..");
  if (dots == std::string_view::npos) {
    auto single = parse_count(text);
    if (!single) return tl::unexpected(single.error());
    return std::vector<size_t>{*single};
  }
  auto first = parse_count(text.substr(0, dots));
  auto last = parse_count(text.substr(dots + 2));
  if (!first) return tl::unexpected(first.error());
  if (!last) return tl::unexpected(last.error());
  if (*first > *last) {
    return tl::unexpected("\"" + std::string(text) +
                          "\" runs backwards; write the smaller count first, e.g. 2..8");
  }
  std::vector<size_t> counts;
  for (size_t n = *first; n <= *last; ++n) counts.push_back(n);
  return counts;
}

tl::expected<std::vector<PolicyRatio>, std::string> parse_ratios(std::string_view text) {
  std::vector<PolicyRatio> ratios;
  while (true) {
    const size_t comma = text.find(',');
    const std::string_view item = trim(text.substr(0, comma));
    const size_t colon = item.find(':');
    if (colon == std::string_view::npos) {
      return tl::unexpected("\"" + std::string(item) +
                            "\" is not least_inflight:session_affinity, e.g. 1.5:1");
    }
    auto inflight = parse_weight(item.substr(0, colon), item);
    if (!inflight) return tl::unexpected(inflight.error());
    auto affinity = parse_weight(item.substr(colon + 1), item);
    if (!affinity) return tl::unexpected(affinity.error());
    ratios.push_back({*inflight, *affinity});
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return ratios;
}

std::string ratio_label(const PolicyRatio& ratio) {
  return shortest(ratio.least_inflight) + ":" + shortest(ratio.session_affinity);
}

std::vector<std::vector<FlipThreshold>> compute_thresholds(const std::vector<size_t>& targets,
                                                           const std::vector<PolicyRatio>& ratios) {
  std::vector<std::vector<FlipThreshold>> rows;
  for (size_t n : targets) {
    auto& row = rows.emplace_back();
    for (const PolicyRatio& ratio : ratios) row.push_back(flip_threshold(n, ratio));
  }
  return rows;
}

std::string render_threshold_table(const std::vector<std::vector<FlipThreshold>>& rows) {
  if (rows.empty()) return "";
  // Column widths: the widest of the header and every cell, so the columns line up.
  const std::string first_header = "targets";
  std::vector<size_t> widths = {first_header.size()};
  for (const FlipThreshold& t : rows.front()) widths.push_back(ratio_label(t.ratio).size());
  for (const auto& row : rows) {
    widths[0] = std::max(widths[0], std::to_string(row.front().targets).size());
    for (size_t c = 0; c < row.size(); ++c)
      widths[c + 1] = std::max(widths[c + 1], cell(row[c]).size());
  }
  std::string out;
  const auto append_row = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t c = 0; c < cells.size(); ++c) {
      line += cells[c];
      if (c + 1 < cells.size()) line += std::string(widths[c] - cells[c].size() + 2, ' ');
    }
    out += line + "\n";
  };
  std::vector<std::string> header = {first_header};
  for (const FlipThreshold& t : rows.front()) header.push_back(ratio_label(t.ratio));
  append_row(header);
  for (const auto& row : rows) {
    std::vector<std::string> cells = {std::to_string(row.front().targets)};
    for (const FlipThreshold& t : row) cells.push_back(cell(t));
    append_row(cells);
  }
  return out;
}

std::string render_threshold_json(const std::vector<std::vector<FlipThreshold>>& rows) {
  // ordered_json keeps the keys in the order written, which reads better than sorted.
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& row : rows) {
    for (const FlipThreshold& t : row) {
      out.push_back(
          {{"targets", t.targets},
           {"ratio", ratio_label(t.ratio)},
           {"least_inflight_weight", t.ratio.least_inflight},
           {"session_affinity_weight", t.ratio.session_affinity},
           {"flip", t.flip ? nlohmann::ordered_json(*t.flip) : nlohmann::ordered_json(nullptr)},
           {"tie_at",
            t.tie_at ? nlohmann::ordered_json(*t.tie_at) : nlohmann::ordered_json(nullptr)}});
    }
  }
  return out.dump(2) + "\n";
}

int run_policy_thresholds(std::string_view targets, std::string_view ratios, bool json) {
  auto counts = parse_target_range(targets);
  if (!counts) {
    std::cerr << "--targets: " << counts.error() << "\n";
    return 1;
  }
  auto parsed = parse_ratios(ratios);
  if (!parsed) {
    std::cerr << "--ratios: " << parsed.error() << "\n";
    return 1;
  }
  const auto rows = compute_thresholds(*counts, *parsed);
  std::cout << (json ? render_threshold_json(rows) : render_threshold_table(rows));
  return 0;
}

}  // namespace rolter
