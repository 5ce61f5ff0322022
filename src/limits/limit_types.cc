#include "limits/limit_types.h"

#include "common/glob.h"

namespace rolter {

bool LimitRule::applies_to(std::string_view route_address) const {
  return route_glob.empty() || glob_match(route_glob, route_address);
}

}  // namespace rolter
