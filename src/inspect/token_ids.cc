#include "inspect/token_ids.h"

#include <charconv>
#include <string>

namespace rolter {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t'; }

tl::unexpected<InspectError> token_ids_error(std::string_view what, size_t at) {
  std::string message(kTokenIdsHeader);
  message += ": ";
  message += what;
  message += " at byte ";
  message += std::to_string(at);
  return tl::unexpected(InspectError{InspectErrorCode::kBadTokenIds, std::move(message)});
}

}  // namespace

tl::expected<void, InspectError> parse_token_ids_header(std::string_view value,
                                                        std::vector<uint32_t>& out) {
  out.clear();
  const char* const begin = value.data();
  const char* const end = begin + value.size();
  const char* p = begin;
  auto skip_spaces = [&] {
    while (p != end && is_space(*p)) ++p;
  };
  skip_spaces();
  if (p == end) {
    return tl::unexpected(InspectError{InspectErrorCode::kBadTokenIds,
                                       std::string(kTokenIdsHeader) + ": empty value"});
  }
  while (true) {
    // from_chars alone would accept nothing we do not want: no sign, no base prefix, no spaces.
    if (p == end || *p < '0' || *p > '9') {
      out.clear();
      return token_ids_error(p == end ? "expected a token id after ','" : "expected a digit",
                             static_cast<size_t>(p - begin));
    }
    uint32_t id = 0;
    auto [next, ec] = std::from_chars(p, end, id);
    if (ec == std::errc::result_out_of_range) {
      out.clear();
      return token_ids_error("token id does not fit in 32 bits", static_cast<size_t>(p - begin));
    }
    out.push_back(id);
    p = next;
    skip_spaces();
    if (p == end) return {};
    if (*p != ',') {
      out.clear();
      return token_ids_error("expected ','", static_cast<size_t>(p - begin));
    }
    ++p;
    skip_spaces();
  }
}

}  // namespace rolter
