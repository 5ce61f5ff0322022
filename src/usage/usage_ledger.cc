#include "usage/usage_ledger.h"

#include <algorithm>
#include <functional>
#include <unordered_map>

#include "common/mutex.h"

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

// Aligned so that two workers' shards never share a cache line.
struct alignas(64) UsageLedger::Shard {
  using Lines = std::unordered_map<UsageKey, UsageCounts, UsageKeyHash, UsageKeyEqual>;
  mutable Mutex mu;
  Lines lines GUARDED_BY(mu);
};

UsageLedger::UsageLedger(size_t shards)
    : shard_count_(std::max<size_t>(shards, 1)), shards_(new Shard[shard_count_]) {}

UsageLedger::~UsageLedger() = default;

void UsageLedger::add(const UsageKeyView& key, const UsageCounts& counts, size_t shard) {
  Shard& s = shards_[shard % shard_count_];
  MutexLock lock(s.mu);
  if (auto it = s.lines.find(key); it != s.lines.end()) {
    it->second += counts;
    return;
  }
  s.lines.emplace(UsageKey{key.hour_ms, std::string(key.key), std::string(key.team),
                           std::string(key.route), std::string(key.model)},
                  counts);
}

std::vector<UsageRow> UsageLedger::drain() {
  Shard::Lines merged;
  for (size_t i = 0; i < shard_count_; ++i) {
    Shard::Lines taken;
    {
      MutexLock lock(shards_[i].mu);
      taken.swap(shards_[i].lines);
    }
    if (merged.empty()) {
      merged.swap(taken);
      continue;
    }
    while (!taken.empty()) {
      auto line = taken.extract(taken.begin());
      if (auto it = merged.find(line.key()); it != merged.end()) {
        it->second += line.mapped();
      } else {
        merged.insert(std::move(line));
      }
    }
  }
  std::vector<UsageRow> rows;
  rows.reserve(merged.size());
  while (!merged.empty()) {
    auto line = merged.extract(merged.begin());
    rows.push_back(UsageRow{std::move(line.key()), line.mapped()});
  }
  return rows;
}

size_t UsageLedger::size() const {
  size_t lines = 0;
  for (size_t i = 0; i < shard_count_; ++i) {
    MutexLock lock(shards_[i].mu);
    lines += shards_[i].lines.size();
  }
  return lines;
}

}  // namespace rolter
