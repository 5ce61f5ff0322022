// Typed, path-aware reading of one TOML table, for the schema walker (internal to config/).
//
// A TableReader wraps a toml::table and its dotted path. Each accessor checks the value's type
// (and range, for numbers), records its position in Diagnostics, reports problems there and leaves
// the output untouched on error, so the walker keeps going and every problem is collected. Keys
// that were asked for are "known"; finish() reports every other key of the table as unknown, at
// the key's own position.
//
// An element of an array of tables that is not a table gets a "dead" reader (reported once, then
// every read is a no-op), so the walker still appends a default entry and the indices of the
// parsed vectors keep matching the "[i]" in paths.
//
// When the load's Diagnostics carries a KeyRecorder (key_recorder.h), every accessor also notes
// there the key it asked for, present or not, and the kind of value it expected.
//
// Thread-safety: none; used by one thread during one load.
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "config/diagnostics.h"
#include "config/key_recorder.h"

namespace rolter::config_internal {

SourcePos pos_of(const toml::source_region& region);
// "integer", "string", "float", ... as used in "expected integer, got string".
std::string_view type_name(toml::node_type type);
// Shortest round-tripping text for a double; "nan", "inf" as such.
std::string format_number(double value);

// What a floating-point field accepts.
enum class NumberRule {
  kNonNegative,  // finite, >= 0
  kPositive,     // finite, > 0
  kUnit,         // finite, in [0, 1]
};

class TableReader {
 public:
  TableReader(const toml::table& table, std::string path, Diagnostics& diag);
  // A dead reader for a value that should have been a table (already reported).
  TableReader(std::string path, Diagnostics& diag);

  const std::string& path() const { return path_; }
  bool alive() const { return table_ != nullptr; }
  SourcePos pos() const { return diag_.where(path_); }
  std::string key_path(std::string_view key) const { return child_path(path_, key); }

  bool has(std::string_view key) const { return table_ != nullptr && table_->contains(key); }

  // Reports "missing required key" at this table's position when `key` is absent.
  bool require(std::string_view key);

  void read(std::string_view key, std::string& out, bool required = false);
  void read(std::string_view key, bool& out);
  void read(std::string_view key, double& out, NumberRule rule);
  void read(std::string_view key, std::optional<double>& out, NumberRule rule);
  void read(std::string_view key, uint32_t& out, int64_t min = 0,
            int64_t max = std::numeric_limits<uint32_t>::max());
  void read(std::string_view key, uint64_t& out, int64_t min = 0,
            int64_t max = std::numeric_limits<int64_t>::max());
  void read(std::string_view key, std::vector<std::string>& out);

  // The sub-table at `key`, or null (absent, or wrong type: reported).
  const toml::table* table(std::string_view key);
  // The array at `key`, or null (absent, or wrong type: reported). `kind` says what its elements
  // must be (kStringArray, kIntegerArray), for the key recorder; the caller checks them.
  const toml::array* array(std::string_view key, KeyKind kind);
  // Calls `fn(reader)` for each element of the array of tables at `key`; an element that is not a
  // table is reported and gets a dead reader. Returns the array, or null (absent, or wrong type:
  // reported).
  const toml::array* for_each_table(std::string_view key,
                                    const std::function<void(TableReader&)>& fn);
  // For a table whose keys the operator names (header names, scorer names, model names): calls
  // `fn(name)` for each key in turn, and `fn` reads it with the accessors above. The key recorder
  // notes them all as one key, "*".
  void for_each_name(const std::function<void(std::string_view name)>& fn);

  // Reports every key that no accessor asked for.
  void finish();

 private:
  // The node at `key` (marking the key known, recording its position, and noting it to the key
  // recorder as `kind`), or null if absent.
  const toml::node* get(std::string_view key, KeyKind kind);
  // Reports a type mismatch at `node` under `path`.
  void type_error(const std::string& path, const toml::node& node, std::string_view expected);
  bool check_number(const std::string& path, const toml::node& node, double value, NumberRule rule);
  bool read_integer(std::string_view key, int64_t min, int64_t max, int64_t& out);

  const toml::table* table_;  // null: dead reader
  std::string path_;
  Diagnostics& diag_;
  std::set<std::string, std::less<>> known_;
  bool named_keys_ = false;  // for_each_name(): the recorder notes every key as "*"
};

}  // namespace rolter::config_internal
