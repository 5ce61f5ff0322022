#include "http/upstream_path.h"

namespace rolter {
namespace {

// "v1", "v2", "v1beta", "v1alpha2": a "v", digits, then letters and digits.
bool is_version(std::string_view segment) {
  if (segment.size() < 2 || segment[0] != 'v' || segment[1] < '0' || segment[1] > '9') {
    return false;
  }
  for (char c : segment.substr(1)) {
    const bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z');
    if (!alnum) return false;
  }
  return true;
}

// The target's first path segment: "/v1/chat?x" -> "v1".
std::string_view first_segment(std::string_view target) {
  if (target.empty() || target[0] != '/') return {};
  std::string_view rest = target.substr(1);
  const size_t end = rest.find_first_of("/?");
  return end == std::string_view::npos ? rest : rest.substr(0, end);
}

}  // namespace

std::string_view upstream_base(std::string_view base_path, std::string_view target) {
  const size_t slash = base_path.rfind('/');
  const std::string_view last =
      slash == std::string_view::npos ? std::string_view{} : base_path.substr(slash + 1);
  if (is_version(last)) {
    const std::string_view first = first_segment(target);
    // The same version on both sides: the base already says it. No version at all on the target:
    // a root path of the engine, beside the API rather than under it.
    if (first == last || !is_version(first)) base_path = base_path.substr(0, slash);
  }
  return base_path;
}

std::string upstream_path(std::string_view base_path, std::string_view target) {
  std::string out(upstream_base(base_path, target));
  out.append(target);
  return out;
}

}  // namespace rolter
