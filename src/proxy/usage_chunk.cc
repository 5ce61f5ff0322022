#include "proxy/usage_chunk.h"

#include <cstring>

namespace rolter {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

size_t skip_spaces(std::string_view text, size_t at) {
  while (at < text.size() && is_space(text[at])) ++at;
  return at;
}

// Whether `key` (quoted) occurs as a key outside strings, followed by ':' and a value starting
// with `open`; `then_close`: the value must be empty (`[]`).
bool key_holds(std::string_view json, std::string_view key, char open, bool then_close) {
  size_t from = 0;
  while ((from = json.find(key, from)) != std::string_view::npos) {
    const size_t at = from;
    from += key.size();
    if (at > 0 && json[at - 1] == '\\') continue;  // inside a string: \"choices\"
    size_t p = skip_spaces(json, from);
    if (p >= json.size() || json[p] != ':') continue;
    p = skip_spaces(json, p + 1);
    if (p >= json.size() || json[p] != open) continue;
    if (!then_close) return true;
    p = skip_spaces(json, p + 1);
    if (p < json.size() && json[p] == ']') return true;
  }
  return false;
}

// The length of the event at the start of `text`, through the blank line that ends it, or 0 when
// it does not end in `text`.
size_t event_length(std::string_view text) {
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] == '\n' && text[i + 1] == '\n') return i + 2;
    if (text[i] == '\r' && text[i + 1] == '\n' && i + 3 < text.size() && text[i + 2] == '\r' &&
        text[i + 3] == '\n') {
      return i + 4;
    }
  }
  return 0;
}

}  // namespace

bool is_usage_only_event(std::string_view event) {
  size_t line_start = 0;
  while (line_start < event.size()) {
    size_t line_end = event.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = event.size();
    std::string_view line = event.substr(line_start, line_end - line_start);
    line_start = line_end + 1;
    if (!line.starts_with("data:")) continue;
    const std::string_view json = line.substr(5);
    if (key_holds(json, "\"choices\"", '[', /*then_close=*/true) &&
        key_holds(json, "\"usage\"", '{', /*then_close=*/false)) {
      return true;
    }
  }
  return false;
}

size_t drop_usage_events(char* data, size_t length) {
  size_t read = 0;
  size_t write = 0;
  while (read < length) {
    const size_t n = event_length(std::string_view(data + read, length - read));
    if (n == 0) break;
    if (!is_usage_only_event(std::string_view(data + read, n))) {
      if (write != read) std::memmove(data + write, data + read, n);
      write += n;
    }
    read += n;
  }
  if (write != read) std::memmove(data + write, data + read, length - read);
  return write + (length - read);
}

}  // namespace rolter
