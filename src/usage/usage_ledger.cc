#include "usage/usage_ledger.h"

#include <functional>

namespace rolter {
namespace {

constexpr int64_t kHourMs = 3'600'000;

// boost::hash_combine's mixing step, widened to 64 bits.
size_t mix(size_t seed, size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

}  // namespace

UsageCounts& UsageCounts::operator+=(const UsageCounts& other) {
  requests += other.requests;
  input_tokens += other.input_tokens;
  cached_input_tokens += other.cached_input_tokens;
  output_tokens += other.output_tokens;
  estimated += other.estimated;
  usd += other.usd;
  return *this;
}

int64_t usage_hour(int64_t unix_ms) {
  int64_t hour = unix_ms / kHourMs;
  if (unix_ms % kHourMs < 0) --hour;
  return hour * kHourMs;
}

size_t UsageKeyHash::operator()(const UsageKeyView& key) const {
  const std::hash<std::string_view> text;
  size_t seed = std::hash<int64_t>()(key.hour_ms);
  seed = mix(seed, text(key.key));
  seed = mix(seed, text(key.team));
  seed = mix(seed, text(key.route));
  return mix(seed, text(key.model));
}

void UsageLedger::add(const UsageKeyView& key, const UsageCounts& counts) {
  MutexLock lock(mu_);
  if (auto it = lines_.find(key); it != lines_.end()) {
    it->second += counts;
    return;
  }
  lines_.emplace(UsageKey{key.hour_ms, std::string(key.key), std::string(key.team),
                          std::string(key.route), std::string(key.model)},
                 counts);
}

std::vector<UsageRow> UsageLedger::drain() {
  std::unordered_map<UsageKey, UsageCounts, UsageKeyHash, UsageKeyEqual> taken;
  {
    MutexLock lock(mu_);
    taken.swap(lines_);
  }
  std::vector<UsageRow> rows;
  rows.reserve(taken.size());
  while (!taken.empty()) {
    auto line = taken.extract(taken.begin());
    rows.push_back(UsageRow{std::move(line.key()), line.mapped()});
  }
  return rows;
}

size_t UsageLedger::size() const {
  MutexLock lock(mu_);
  return lines_.size();
}

}  // namespace rolter
