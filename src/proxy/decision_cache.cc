#include "proxy/decision_cache.h"

#include <algorithm>
#include <cstdio>

#include "common/hash.h"

namespace rolter {

std::string DecisionCache::key_of(std::string_view route, std::string_view key) {
  // The route's length first: no (route, key) pair can spell another's.
  std::string out = std::to_string(route.size());
  out.push_back(':');
  out.append(route);
  if (key.size() <= kMaxStoredKeyBytes) {
    out.push_back('k');
    out.append(key);
    return out;
  }
  // A longer key (a header may be 64 KiB, a body field far more) is stored as a 128-bit digest, so
  // the cache's memory stays bounded by its capacity whatever clients send.
  char digest[33];
  std::snprintf(digest, sizeof digest, "%016llx%016llx",
                static_cast<unsigned long long>(hash64(key, 1)),
                static_cast<unsigned long long>(hash64(key, 2)));
  out.push_back('h');
  out.append(digest, 32);
  return out;
}

std::optional<DecisionVerdict> DecisionCache::find(std::string_view route, std::string_view key) {
  if (key.empty()) return std::nullopt;
  auto it = entries_.find(key_of(route, key));
  if (it == entries_.end() || clock_.now() >= it->second.expires) return std::nullopt;
  return it->second.verdict;
}

void DecisionCache::put(std::string_view route, std::string_view key,
                        const DecisionVerdict& verdict) {
  if (key.empty() || capacity_ == 0) return;
  std::string k = key_of(route, key);
  const auto expires = clock_.now() + kTtl;
  if (auto it = entries_.find(k); it != entries_.end()) {
    it->second = Entry{verdict, expires};
    return;
  }
  make_room();
  order_.push_back(k);
  entries_.emplace(std::move(k), Entry{verdict, expires});
}

void DecisionCache::make_room() {
  if (entries_.size() < capacity_) return;
  const auto now = clock_.now();
  std::erase_if(entries_, [&](const auto& entry) { return now >= entry.second.expires; });
  std::erase_if(order_, [&](const std::string& k) { return !entries_.contains(k); });
  while (entries_.size() >= capacity_ && !order_.empty()) {
    entries_.erase(order_.front());
    order_.pop_front();
  }
}

}  // namespace rolter
