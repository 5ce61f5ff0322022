#include "flow/priority.h"

#include <algorithm>

namespace rolter {

std::optional<uint8_t> parse_priority(std::string_view header) {
  while (!header.empty() && (header.front() == ' ' || header.front() == '\t')) header.remove_prefix(1);
  while (!header.empty() && (header.back() == ' ' || header.back() == '\t')) header.remove_suffix(1);
  if (header.size() != 1 || header[0] < '0' || header[0] > '0' + kMaxPriority) return std::nullopt;
  return static_cast<uint8_t>(header[0] - '0');
}

uint8_t priority_band(std::string_view header, const PriorityDefaults& defaults) {
  if (const std::optional<uint8_t> asked = parse_priority(header)) {
    return std::min(*asked, defaults.max_priority.value_or(kMaxPriority));
  }
  if (defaults.key) return std::min(*defaults.key, kMaxPriority);
  if (defaults.route) return std::min(*defaults.route, kMaxPriority);
  return kDefaultPriority;
}

}  // namespace rolter
