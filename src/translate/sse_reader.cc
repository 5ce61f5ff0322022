#include "translate/sse_reader.h"

namespace rolter {

void SseReader::take_line() {
  if (line_.front() == ':') return;  // a comment
  const size_t colon = line_.find(':');
  std::string_view field(line_);
  std::string_view value;
  if (colon != std::string::npos) {
    field = std::string_view(line_).substr(0, colon);
    value = std::string_view(line_).substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "event") {
    event_.event.assign(value);
  } else if (field == "data") {
    if (has_data_) event_.data.push_back('\n');
    event_.data.append(value);
    has_data_ = true;
  }
}

}  // namespace rolter
