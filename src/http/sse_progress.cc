#include "http/sse_progress.h"

#include <algorithm>
#include <array>

#include "common/json_peek.h"

namespace rolter {
namespace {

constexpr std::array<std::string_view, 7> kContentKeys = {
    "\"content\"",   "\"text\"",         "\"delta\"",   "\"reasoning_content\"",
    "\"arguments\"", "\"partial_json\"", "\"thinking\""};
constexpr std::string_view kSequenceKey = "\"sequence_number\"";
}  // namespace

void SseProgress::scan(std::string_view text, size_t carried) {
  // Every key ends in `"`; look at each closing quote that follows a key we know.
  for (size_t quote = text.find('"', 1); quote != std::string_view::npos;
       quote = text.find('"', quote + 1)) {
    const size_t end = quote + 1;
    const std::string_view before = text.substr(0, end);
    if (before.ends_with(kSequenceKey)) {
      if (auto n = json_peek::number_after(text, end)) sequence_ = *n;
      continue;
    }
    for (auto key : kContentKeys) {
      if (!before.ends_with(key) || !json_peek::non_empty_string_after(text, end)) continue;
      content_ = true;
      // In a seam, only a field that straddles the carried tail and the new chunk is new: one
      // wholly in the tail was counted with the previous chunk, one wholly after it is counted
      // with this chunk.
      const size_t first_value_byte = json_peek::value_at(text, end) + 1;
      if (carried == 0 || (end - key.size() < carried && first_value_byte >= carried)) {
        ++pieces_;
      }
      break;
    }
  }
}

size_t complete_events_length(std::string_view text) {
  // Scan back for a line end that directly follows another line end.
  for (size_t i = text.size(); i >= 2; --i) {
    const char last = text[i - 1];
    if (last != '\n' && last != '\r') continue;
    const char before = text[i - 2];
    if (last == '\n' && before == '\n') return i;
    if (last == '\r' && before == '\r') return i;
    if (last == '\n' && before == '\r' && i >= 4 && text[i - 3] == '\n' && text[i - 4] == '\r') {
      return i;
    }
  }
  return 0;
}

bool SseProgress::feed(std::string_view chunk) {
  seam_.feed(chunk, [&](std::string_view text) {
    // The seam is the previous chunk's tail joined to this chunk's head.
    const bool seam = text.data() != chunk.data();
    scan(text, seam ? text.size() - std::min(chunk.size(), kCarry) : 0);
  });
  return content_;
}

}  // namespace rolter
