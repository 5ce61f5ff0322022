#include "bench/pd_split.h"

#include <algorithm>
#include <charconv>
#include <optional>

namespace rolter::bench {
namespace {

// A whole decimal number, nothing else; nullopt otherwise.
std::optional<size_t> whole_number(std::string_view s) {
  size_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

tl::expected<PdSplit, std::string> parse_one(std::string_view item, size_t engines) {
  const std::string quoted = "--pd \"" + std::string(item) + "\": ";
  const auto colon = item.find(':');
  if (colon == std::string_view::npos) {
    return tl::unexpected(quoted + "expected P:D, prefill engines:decode engines (e.g. 2:6)");
  }
  const auto p = whole_number(item.substr(0, colon));
  const auto d = whole_number(item.substr(colon + 1));
  if (!p || !d) return tl::unexpected(quoted + "P and D must be whole numbers (e.g. 2:6)");
  if (*p == 0 || *d == 0) {
    return tl::unexpected(quoted + "needs at least one prefill and one decode engine");
  }
  if (*p + *d != engines) {
    return tl::unexpected(quoted + "P + D = " + std::to_string(*p + *d) + " but --engines is " +
                          std::to_string(engines) + "; they must be equal");
  }
  return PdSplit{.prefill = *p, .decode = *d};
}

}  // namespace

tl::expected<std::vector<PdSplit>, std::string> parse_pd_list(std::string_view text,
                                                              size_t engines) {
  std::vector<PdSplit> out;
  if (text.empty()) return out;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    const std::string_view item = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    auto split = parse_one(item, engines);
    if (!split) return tl::unexpected(split.error());
    if (std::find(out.begin(), out.end(), *split) != out.end()) {
      return tl::unexpected("--pd \"" + std::string(item) + "\" is listed twice");
    }
    out.push_back(*split);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string pd_label(const PdSplit& split, std::string_view prefill_strategy) {
  return "pd " + std::to_string(split.prefill) + ":" + std::to_string(split.decode) + " (" +
         std::string(prefill_strategy) + "/least load)";
}

}  // namespace rolter::bench
