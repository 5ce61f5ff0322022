#include "store/store_url.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace rolter {
namespace {

constexpr std::string_view kRedacted = "***";

bool starts_with_nocase(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() &&
         std::equal(prefix.begin(), prefix.end(), text.begin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) ==
                  std::tolower(static_cast<unsigned char>(b));
         });
}

struct Span {
  size_t pos = 0;
  size_t size = 0;
};

// Where the passwords of `url` are: the one in "scheme://user:password@host", and the value of
// every password= query parameter. In the order they appear.
std::vector<Span> password_spans(std::string_view url) {
  std::vector<Span> spans;
  const size_t scheme_end = url.find("://");
  if (scheme_end != std::string_view::npos) {
    const size_t start = scheme_end + 3;
    const size_t authority_end = std::min(url.find_first_of("/?#", start), url.size());
    // The last '@' of the authority ends the userinfo: a password may itself hold an '@'.
    const size_t at = url.substr(0, authority_end).rfind('@');
    if (at != std::string_view::npos && at >= start) {
      const size_t colon = url.substr(0, at).find(':', start);
      if (colon != std::string_view::npos) spans.push_back({colon + 1, at - colon - 1});
    }
  }
  const size_t query = url.find('?');
  size_t pos = query == std::string_view::npos ? url.size() : query + 1;
  constexpr std::string_view kKey = "password=";
  while (pos < url.size()) {
    const size_t end = std::min(url.find_first_of("&#", pos), url.size());
    if (starts_with_nocase(url.substr(pos, end - pos), kKey)) {
      spans.push_back({pos + kKey.size(), end - pos - kKey.size()});
    }
    pos = end + 1;
  }
  return spans;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decoded(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex_value(text[i + 1]) >= 0 &&
        hex_value(text[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(text[i + 1]) * 16 + hex_value(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

void replace_all(std::string& text, std::string_view needle) {
  if (needle.empty()) return;
  for (size_t pos = text.find(needle); pos != std::string::npos;
       pos = text.find(needle, pos + kRedacted.size())) {
    text.replace(pos, needle.size(), kRedacted);
  }
}

}  // namespace

tl::expected<StoreUrl, std::string> parse_store_url(std::string_view url) {
  if (starts_with_nocase(url, "postgres://") || starts_with_nocase(url, "postgresql://")) {
    return StoreUrl{StoreBackend::kPostgres, std::string(url)};
  }
  if (starts_with_nocase(url, "sqlite:")) {
    std::string_view path = url.substr(7);
    if (path.substr(0, 2) == "//") path.remove_prefix(2);  // sqlite://PATH; sqlite:///abs
    if (path.empty()) return tl::unexpected(std::string("store URL \"sqlite:\" names no file"));
    return StoreUrl{StoreBackend::kSqlite, std::string(path)};
  }
  return tl::unexpected("store URL \"" + redact_password(url) +
                        "\" is not supported: use sqlite:PATH or postgres://...");
}

std::string redact_password(std::string_view url) {
  std::string out(url);
  const std::vector<Span> spans = password_spans(url);
  // From the last to the first, so that earlier positions stay valid.
  for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
    out.replace(it->pos, it->size, kRedacted);
  }
  return out;
}

std::string hide_password(std::string message, std::string_view url) {
  for (const Span& span : password_spans(url)) {
    const std::string_view password = url.substr(span.pos, span.size);
    replace_all(message, password);
    replace_all(message, percent_decoded(password));
  }
  return message;
}

}  // namespace rolter
