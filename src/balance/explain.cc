#include "balance/explain.h"

#include <cmath>
#include <cstdio>

#include "common/json_escape.h"

namespace rolter {
namespace {

void append_number(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  char buf[32];
  const int n = std::snprintf(buf, sizeof buf, "%.4g", value);
  out.append(buf, static_cast<size_t>(n));
}

// A header value must stay visible ASCII: bytes outside it (from UTF-8 model names) become '?'.
void make_header_safe(std::string& s) {
  for (char& c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) c = '?';
  }
}

}  // namespace

void Explain::eligible(size_t i, bool value) {
  if (i < rows_.size()) rows_[i].eligible = value;
}

void Explain::load(size_t i, uint32_t value) {
  if (i < rows_.size()) rows_[i].load = value;
}

void Explain::score(size_t i, std::string_view component, double value) {
  if (i >= rows_.size()) return;
  for (auto& [name, v] : rows_[i].scores) {
    if (name == component) {
      v = value;
      return;
    }
  }
  rows_[i].scores.emplace_back(std::string(component), value);
}

void Explain::total(size_t i, double value) {
  if (i < rows_.size()) rows_[i].total = value;
}

void Explain::reason(std::string text) { reasons_.push_back(std::move(text)); }

std::string Explain::to_json(std::string_view strategy, std::span<const std::string> labels,
                             std::optional<size_t> winner) const {
  auto label = [&](size_t i) -> std::string_view {
    return i < labels.size() ? std::string_view(labels[i]) : std::string_view("?");
  };
  std::string out = "{\"strategy\":";
  append_json_string(out, strategy);
  out += ",\"winner\":";
  if (winner) {
    append_json_string(out, label(*winner));
  } else {
    out += "null";
  }
  out += ",\"reasons\":[";
  for (size_t r = 0; r < reasons_.size(); ++r) {
    if (r > 0) out += ',';
    append_json_string(out, reasons_[r]);
  }
  out += "],\"candidates\":[";
  for (size_t i = 0; i < rows_.size(); ++i) {
    const Row& row = rows_[i];
    if (i > 0) out += ',';
    out += "{\"target\":";
    append_json_string(out, label(i));
    out += ",\"eligible\":";
    out += row.eligible ? "true" : "false";
    if (row.load) {
      out += ",\"load\":";
      out += std::to_string(*row.load);
    }
    if (!row.scores.empty()) {
      out += ",\"scores\":{";
      for (size_t s = 0; s < row.scores.size(); ++s) {
        if (s > 0) out += ',';
        append_json_string(out, row.scores[s].first);
        out += ':';
        append_number(out, row.scores[s].second);
      }
      out += '}';
    }
    if (row.total) {
      out += ",\"total\":";
      append_number(out, *row.total);
    }
    out += '}';
  }
  out += "]}";
  make_header_safe(out);
  return out;
}

}  // namespace rolter
