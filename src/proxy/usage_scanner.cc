#include "proxy/usage_scanner.h"

#include <algorithm>
#include <array>

#include "common/json_peek.h"

namespace rolter {
namespace {

struct Field {
  std::string_view key;  // with its quotes
  bool input;
};

constexpr std::array<Field, 4> kFields = {{
    {"\"prompt_tokens\"", true},
    {"\"input_tokens\"", true},
    {"\"completion_tokens\"", false},
    {"\"output_tokens\"", false},
}};

}  // namespace

void UsageScanner::scan(std::string_view text) {
  // Every key ends in `_tokens"`: find those, in text order, and see which key it closes.
  static constexpr std::string_view kSuffix = "_tokens\"";
  size_t from = 0;
  while ((from = text.find(kSuffix, from)) != std::string_view::npos) {
    const size_t end = from + kSuffix.size();
    for (const auto& field : kFields) {
      if (end >= field.key.size() &&
          text.substr(end - field.key.size(), field.key.size()) == field.key) {
        if (auto value = json_peek::number_after(text, end))
          (field.input ? input_ : output_) = *value;
        break;
      }
    }
    from = end;
  }
}

void UsageScanner::feed(std::string_view chunk) {
  seam_.feed(chunk, [this](std::string_view text) { scan(text); });
}

}  // namespace rolter
