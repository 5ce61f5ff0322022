// A request's priority band (SPEC §19): `x-rolter-priority` clamped to the key's `max_priority`,
// else the key's, its team's or its route's `priority`, else 4.
//
//   const uint8_t band = priority_band(request["x-rolter-priority"], {.key = 6, .route = 2});
//
// A header that is not a whole number 0..7 is ignored (the request falls back to its defaults):
// a client that spells it wrong gets the band it would have had without it, never an error.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace rolter {

inline constexpr uint8_t kDefaultPriority = 4;
inline constexpr uint8_t kMaxPriority = 7;

struct PriorityDefaults {
  std::optional<uint8_t> max_priority;  // the key's ceiling for the header
  std::optional<uint8_t> key;           // the key's own priority, else its team's
  std::optional<uint8_t> route;         // the route's
};

// The header's value when it is a whole number 0..7; nullopt otherwise.
std::optional<uint8_t> parse_priority(std::string_view header);

uint8_t priority_band(std::string_view header, const PriorityDefaults& defaults);

}  // namespace rolter
