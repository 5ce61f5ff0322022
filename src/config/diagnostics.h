// Collects the errors and warnings of one config load, and where in the file each key was read.
//
// Internal to config/. The schema walker records the position of every table and value it reads
// under its dotted key path ("routes[1].targets[0].provider"); the semantic validator, which works
// on the parsed Config and no longer sees the TOML document, locates its findings by path. A path
// that was never read (a missing key) falls back to its enclosing table's position.
//
// A test may also hand it a KeyRecorder (key_recorder.h): the walker then notes every key it asks
// for there. Loads have none.
//
// Thread-safety: none; one instance per load, used by one thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "config/loader.h"

namespace rolter::config_internal {

class KeyRecorder;

struct SourcePos {
  uint32_t line = 0;
  uint32_t column = 0;
};

class Diagnostics {
 public:
  explicit Diagnostics(std::string file) : file_(std::move(file)) {}

  const std::string& file() const { return file_; }

  // Where the schema walker notes every key it asks for; null (the default) for none.
  void record_keys_to(KeyRecorder* recorder) { key_recorder_ = recorder; }
  KeyRecorder* key_recorder() const { return key_recorder_; }

  // Remembers where `path` is defined. The first position recorded for a path wins.
  void remember(const std::string& path, SourcePos pos) { positions_.emplace(path, pos); }

  // Whether the walker read a value or table at exactly `path`.
  bool was_read(const std::string& path) const { return positions_.count(path) != 0; }

  // The position of `path`, or of its nearest enclosing path that was recorded; {0, 0} if none.
  SourcePos where(std::string_view path) const;

  // An error at an explicit position (the schema walker knows the exact node).
  void error_at(const std::string& path, SourcePos pos, std::string message);
  // An error located through where(). Dropped when `path` or an enclosing path already has an
  // error, so that a value rejected by the walker (wrong type, missing) is not reported again by
  // the validator.
  void error(const std::string& path, std::string message);
  void warning(const std::string& path, std::string message);

  bool has_errors() const { return !errors_.empty(); }
  bool has_error_at(const std::string& path) const { return errored_.count(path) != 0; }
  // Whether `path` or one of its enclosing paths has an error.
  bool has_error_within(std::string_view path) const;

  // The findings in file order (line, then column; stable for equal positions).
  ConfigErrors take_errors();
  ConfigErrors take_warnings();

 private:
  std::string file_;
  KeyRecorder* key_recorder_ = nullptr;
  std::unordered_map<std::string, SourcePos> positions_;
  std::unordered_set<std::string> errored_;
  ConfigErrors errors_;
  ConfigErrors warnings_;
};

// "parent.key", with the key quoted when it is not a bare TOML key; just "key" at the root.
std::string child_path(std::string_view parent, std::string_view key);
// "parent[index]".
std::string index_path(std::string_view parent, size_t index);
// The enclosing path: "a.b[2]" -> "a.b" -> "a" -> "".
std::string_view parent_path(std::string_view path);

}  // namespace rolter::config_internal
