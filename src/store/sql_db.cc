#include "store/sql_db.h"

#include <charconv>

namespace rolter {

std::optional<std::string> nul_byte_error(std::span<const SqlValue> params) {
  for (size_t i = 0; i < params.size(); ++i) {
    const auto* text = std::get_if<std::string_view>(&params[i]);
    if (text && text->find('\0') != std::string_view::npos) {
      return "value $" + std::to_string(i + 1) + " contains a NUL byte, which cannot be stored";
    }
  }
  return std::nullopt;
}

int64_t int64_column(std::string_view text) {
  int64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

std::string statement_excerpt(std::string_view sql) {
  // Long enough to name the statement and its table.
  constexpr size_t kMax = 60;
  std::string out;
  bool space = false;
  for (char c : sql) {
    if (out.size() >= kMax) {
      out += "...";
      break;
    }
    if (c == ' ' || c == '\n' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

}  // namespace rolter
