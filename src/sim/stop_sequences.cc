#include "sim/stop_sequences.h"

namespace rolter::sim {

std::string cut_at_stop(std::vector<std::string>& pieces, std::span<const std::string> stops) {
  std::string text;
  for (const auto& piece : pieces) text += piece;
  size_t cut = std::string::npos;
  const std::string* hit = nullptr;
  for (const std::string& stop : stops) {
    if (stop.empty()) continue;
    const size_t at = text.find(stop);
    if (at < cut) {
      cut = at;
      hit = &stop;
    }
  }
  if (hit == nullptr) return {};
  size_t offset = 0;
  size_t kept = 0;
  while (kept < pieces.size() && offset + pieces[kept].size() <= cut) {
    offset += pieces[kept].size();
    ++kept;
  }
  if (kept < pieces.size() && offset < cut) {
    pieces[kept].resize(cut - offset);
    ++kept;
  }
  pieces.resize(kept);
  return *hit;
}

}  // namespace rolter::sim
