#include "app/build_info.h"

namespace rolter {

std::string version_text(const BuildInfo& info) {
  std::string text = "rolter ";
  text.append(info.version).append(" (commit ").append(info.commit);
  text.append(", ").append(info.build_type).append(")");
  return text;
}

}  // namespace rolter
