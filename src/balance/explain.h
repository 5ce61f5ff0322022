// Explain: why one pick went the way it did, for a request that sent `x-rolter-explain: 1`
// (returned as the `x-rolter-decision` header).
//
// A request that did not ask carries ctx.explain == nullptr, and strategies then compute nothing
// for it: every recording call sits behind one `if (ctx.explain)`. A strategy that is asked
// records, per candidate, whether it was eligible, its load, and each named score component, and
// adds a plain-language reason when a guard or eligibility changed the outcome.
//
// Thread-safety: none; one Explain belongs to one request on one thread.
//
//   Explain explain(candidates.size());
//   ctx.explain = &explain;
//   auto idx = lb->pick_eligible(ctx, loads, eligible);
//   std::string header = explain.to_json("cache_aware", labels, idx);
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rolter {

class Explain {
 public:
  struct Row {
    bool eligible = true;
    std::optional<uint32_t> load;
    // Named components in the order recorded, e.g. {"prefix", 0.92}. A score stack records each
    // scorer's weighted contribution under the scorer's name.
    std::vector<std::pair<std::string, double>> scores;
    std::optional<double> total;
  };

  explicit Explain(size_t candidate_count) : rows_(candidate_count) {}

  size_t size() const { return rows_.size(); }
  // Each setter ignores an index out of range.
  void eligible(size_t i, bool value);
  void load(size_t i, uint32_t value);
  void score(size_t i, std::string_view component, double value);
  void total(size_t i, double value);
  // Adds a reason, e.g. "warm candidate 2 overloaded (load 9 > min 3 + 2 and > 1.5 x 3)".
  void reason(std::string text);

  const std::vector<Row>& rows() const { return rows_; }
  const std::vector<std::string>& reasons() const { return reasons_; }

  // One line of compact JSON, ASCII only (safe as a header value):
  //   {"strategy":"cache_aware","winner":"engine-a/m","reasons":[...],
  //    "candidates":[{"target":"engine-a/m","eligible":true,"load":3,"scores":{"prefix":0.92},
  //                   "total":0.92}, ...]}
  // labels[i] names candidate i; winner is the index finally chosen (nullopt: none).
  std::string to_json(std::string_view strategy, std::span<const std::string> labels,
                      std::optional<size_t> winner) const;

 private:
  std::vector<Row> rows_;
  std::vector<std::string> reasons_;
};

}  // namespace rolter
