#include "collect/engine_metrics/prometheus_text.h"

#include <charconv>
#include <cstddef>
#include <system_error>

namespace rolter {
namespace {

constexpr size_t kNone = std::string_view::npos;

bool is_blank(char c) { return c == ' ' || c == '\t'; }

// Metric names are [a-zA-Z_:][a-zA-Z0-9_:]*; label names the same without ':', which is accepted
// here too: being lenient about a label's name cannot change which samples match.
bool is_name_char(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
         (!first && c >= '0' && c <= '9');
}

size_t skip_blanks(std::string_view line, size_t pos) {
  while (pos < line.size() && is_blank(line[pos])) ++pos;
  return pos;
}

// The index just past the closing quote of the label value whose opening quote is line[pos - 1],
// or kNone when the line ends first. A backslash escapes the next character, whatever it is.
size_t skip_label_value(std::string_view line, size_t pos) {
  while (pos < line.size() && line[pos] != '"') {
    pos += line[pos] == '\\' ? 2 : 1;
  }
  return pos < line.size() ? pos + 1 : kNone;
}

// The index just past the label set that opens at line[pos] == '{', or kNone when it is
// malformed: a label without '=' or without a quoted value, or no closing '}'.
size_t skip_labels(std::string_view line, size_t pos) {
  ++pos;
  for (;;) {
    pos = skip_blanks(line, pos);
    if (pos >= line.size()) return kNone;
    if (line[pos] == '}') return pos + 1;  // also after a trailing comma, as the format allows
    const size_t start = pos;
    while (pos < line.size() && is_name_char(line[pos], pos == start)) ++pos;
    if (pos == start) return kNone;
    pos = skip_blanks(line, pos);
    if (pos >= line.size() || line[pos] != '=') return kNone;
    pos = skip_blanks(line, pos + 1);
    if (pos >= line.size() || line[pos] != '"') return kNone;
    pos = skip_label_value(line, pos + 1);
    if (pos == kNone) return kNone;
    pos = skip_blanks(line, pos);
    if (pos < line.size() && line[pos] == ',') {
      ++pos;
    } else if (pos >= line.size() || line[pos] != '}') {
      return kNone;
    }
  }
}

// A sample value: a decimal float, or NaN / Inf in any case with an optional sign. from_chars
// takes no '+', which Prometheus writes before Inf.
std::optional<double> parse_value(std::string_view token) {
  if (token.size() > 1 && token.front() == '+' && token[1] != '-' && token[1] != '+') {
    token.remove_prefix(1);
  }
  if (token.empty()) return std::nullopt;
  double value = 0;
  const char* end = token.data() + token.size();
  const auto [ptr, ec] = std::from_chars(token.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

enum class LineResult { kOther, kSample, kUnreadable };

// Reads one line (without its '\n'). When it is a sample of `name`, adds its value to `sum`.
LineResult read_line(std::string_view line, std::string_view name, double& sum) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  size_t pos = skip_blanks(line, 0);
  if (pos >= line.size() || line[pos] == '#') return LineResult::kOther;
  const size_t start = pos;
  while (pos < line.size() && is_name_char(line[pos], pos == start)) ++pos;
  if (line.substr(start, pos - start) != name) return LineResult::kOther;
  pos = skip_blanks(line, pos);
  if (pos < line.size() && line[pos] == '{') {
    pos = skip_labels(line, pos);
    if (pos == kNone) return LineResult::kUnreadable;
    pos = skip_blanks(line, pos);
  }
  // The value ends at the next blank; a timestamp or an exemplar may follow and is ignored.
  size_t end = pos;
  while (end < line.size() && !is_blank(line[end])) ++end;
  const auto value = parse_value(line.substr(pos, end - pos));
  if (!value) return LineResult::kUnreadable;
  sum += *value;
  return LineResult::kSample;
}

}  // namespace

std::optional<double> sum_samples(std::string_view text, std::string_view name) {
  if (name.empty()) return std::nullopt;
  double sum = 0;
  bool found = false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == kNone) end = text.size();
    switch (read_line(text.substr(pos, end - pos), name, sum)) {
      case LineResult::kOther:
        break;
      case LineResult::kSample:
        found = true;
        break;
      case LineResult::kUnreadable:
        return std::nullopt;
    }
    pos = end + 1;
  }
  if (!found) return std::nullopt;
  return sum;
}

}  // namespace rolter
