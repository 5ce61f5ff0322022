// KeyRecorder: every key path a schema walk asks for, with the kind of value asked (internal to
// config/).
//
// The schema walker reads each key through a TableReader accessor (toml_reader.h). Given a
// recorder, those accessors note here the key's path with array indices dropped
// ("providers[2].cost.input" -> "providers[].cost.input") and what they expected there. A table
// whose keys the operator names (header names, scorer names, model names) is noted as one key,
// "*" ("routes[].pipeline.*"). This lets a test enumerate the schema from the code itself, e.g. to
// compare it with docs/configuration.md. Normal loads pass no recorder and pay nothing for it.
//
// Thread-safety: none; used by one thread during one load.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace rolter::config_internal {

enum class KeyKind {
  kString,
  kBoolean,
  kInteger,
  kNumber,  // integer or float
  kStringArray,
  kIntegerArray,
  kTable,
  kTableArray,  // [[x]], or an array of inline tables
};

// "string", "boolean", "integer", "number", "array of strings", "array of integers", "table",
// "array of tables": the Type column of docs/configuration.md.
std::string_view kind_name(KeyKind kind);

// `path` with every "[N]" written "[]": "routes[3].targets[0]" -> "routes[].targets[]".
std::string without_indices(std::string_view path);

class KeyRecorder {
 public:
  // Notes the key at `path` (a dotted path as Diagnostics writes it). The first kind noted for a
  // path is kept.
  void record(std::string_view path, KeyKind kind);

  // Every path noted, without indices, with its kind.
  const std::map<std::string, KeyKind, std::less<>>& keys() const { return keys_; }

 private:
  std::map<std::string, KeyKind, std::less<>> keys_;
};

}  // namespace rolter::config_internal
