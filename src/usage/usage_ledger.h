// UsageLedger: what each key, team, route and target model used, summed per UTC hour in a node's
// memory (SPEC §15), until a flusher drains it into the store. Never a store write per request:
// the request path only adds to a map; collect/usage_flush/ writes the sums, one transaction per
// flush interval.
//
//   UsageLedger ledger;
//   ledger.add({.hour_ms = usage_hour(now_ms), .key = "ci", .team = "ml", .route = "qwen3",
//               .model = "Qwen/Qwen3-8B"},
//              {.requests = 1, .input_tokens = 812, .output_tokens = 64, .usd = 0.00012});
//   std::vector<UsageRow> rows = ledger.drain();  // everything since the last drain; now empty
//
// The ledger is split into shards, one per worker (`UsageLedger ledger(workers)`, then
// `ledger.add(key, counts, worker_index)`): a worker adds to its own map under its own mutex, which
// only the drain also takes, so workers share no lock and no cache line on the request path.
// drain() merges a line that several shards hold into one row.
//
// Thread-safety: add(), drain() and size() may be called from any thread at once; each shard's
// mutex guards its map, held only for a hash lookup and a few additions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace rolter {

// One ledger line: an hour (unix ms at the start of the UTC hour) and who used what through
// which route and model. Names, never secrets: `key` is a key's name, "" when the gateway is open.
struct UsageKey {
  int64_t hour_ms = 0;
  std::string key;
  std::string team;  // "" when the key has none
  std::string route;
  std::string model;  // the target model that answered
  bool operator==(const UsageKey&) const = default;
};

// A UsageKey's names as views, for adding to the ledger without copying them when the line
// exists already (every request but the first of its hour).
struct UsageKeyView {
  int64_t hour_ms = 0;
  std::string_view key;
  std::string_view team;
  std::string_view route;
  std::string_view model;
};

struct UsageCounts {
  uint64_t requests = 0;
  uint64_t input_tokens = 0;
  uint64_t cached_input_tokens = 0;  // part of input_tokens
  uint64_t output_tokens = 0;
  uint64_t estimated = 0;  // requests whose usage was estimated: the answer reported none
  double usd = 0;          // spend at the catalog's prices
  UsageCounts& operator+=(const UsageCounts& other);
  bool operator==(const UsageCounts&) const = default;
};

struct UsageRow {
  UsageKey key;
  UsageCounts counts;
  bool operator==(const UsageRow&) const = default;
};

// The start of the UTC hour holding `unix_ms` (hours before 1970 round down too).
int64_t usage_hour(int64_t unix_ms);

// Hashes and compares UsageKey and UsageKeyView alike (heterogeneous look-up).
struct UsageKeyHash {
  using is_transparent = void;
  size_t operator()(const UsageKeyView& key) const;
  size_t operator()(const UsageKey& key) const {
    return (*this)(UsageKeyView{key.hour_ms, key.key, key.team, key.route, key.model});
  }
};
struct UsageKeyEqual {
  using is_transparent = void;
  static UsageKeyView view(const UsageKey& k) {
    return {k.hour_ms, k.key, k.team, k.route, k.model};
  }
  static const UsageKeyView& view(const UsageKeyView& k) { return k; }
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    const UsageKeyView x = view(a);
    const UsageKeyView y = view(b);
    return x.hour_ms == y.hour_ms && x.key == y.key && x.team == y.team && x.route == y.route &&
           x.model == y.model;
  }
};

class UsageLedger {
 public:
  // A ledger of `shards` maps (at least one); add() names the shard it adds to.
  explicit UsageLedger(size_t shards = 1);
  ~UsageLedger();

  // Adds `counts` to the line of `key` in shard `shard` (taken modulo the shard count); the names
  // are copied only for a line the shard does not hold yet.
  void add(const UsageKeyView& key, const UsageCounts& counts, size_t shard = 0);
  void add(const UsageKey& key, const UsageCounts& counts, size_t shard = 0) {
    add(UsageKeyEqual::view(key), counts, shard);
  }
  // Takes every line added since the last drain (in no particular order, one row per line
  // whichever shards held it) and empties the ledger.
  std::vector<UsageRow> drain();
  // Lines held now, counted per shard: a line two shards hold counts twice.
  size_t size() const;
  size_t shards() const { return shard_count_; }

 private:
  struct Shard;
  size_t shard_count_;
  std::unique_ptr<Shard[]> shards_;
};

}  // namespace rolter
