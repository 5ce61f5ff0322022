#include "bench/cache_bounds.h"

#include <list>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/hash.h"

namespace rolter::bench {
namespace {

// Chain key of every full block: block j's key covers ids 0..j, which is what "prefix" means.
void prefix_keys(const TraceRequest& req, std::vector<uint64_t>& keys) {
  keys.clear();
  uint64_t key = 0x9e3779b97f4a7c15ULL;  // any fixed non-zero start
  for (size_t j = 0; j < req.full_blocks(); ++j) {
    key = hash_combine(key, req.hash_ids[j]);
    keys.push_back(key);
  }
}

}  // namespace

HitCount ideal_hit_ratio(std::span<const TraceRequest> trace) {
  HitCount count;
  std::unordered_set<uint64_t> seen;
  std::vector<uint64_t> keys;
  for (const TraceRequest& req : trace) {
    count.prompt_tokens += req.input_length;
    prefix_keys(req, keys);
    for (uint64_t k : keys) {
      if (!seen.contains(k)) break;
      count.hit_tokens += kTraceBlockTokens;
    }
    seen.insert(keys.begin(), keys.end());
  }
  return count;
}

HitCount pooled_lru_hit_ratio(std::span<const TraceRequest> trace, size_t capacity_blocks) {
  HitCount count;
  std::list<uint64_t> lru;  // front = most recently used
  std::unordered_map<uint64_t, std::list<uint64_t>::iterator> where;
  std::vector<uint64_t> keys;
  for (const TraceRequest& req : trace) {
    count.prompt_tokens += req.input_length;
    prefix_keys(req, keys);
    for (uint64_t k : keys) {
      if (!where.contains(k)) break;
      count.hit_tokens += kTraceBlockTokens;
    }
    if (capacity_blocks == 0) continue;
    for (auto k = keys.rbegin(); k != keys.rend(); ++k) {
      if (auto it = where.find(*k); it != where.end()) {
        lru.splice(lru.begin(), lru, it->second);
        continue;
      }
      lru.push_front(*k);
      where.emplace(*k, lru.begin());
      if (lru.size() > capacity_blocks) {
        where.erase(lru.back());
        lru.pop_back();
      }
    }
  }
  return count;
}

}  // namespace rolter::bench
