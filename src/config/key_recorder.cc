#include "config/key_recorder.h"

#include <cctype>

namespace rolter::config_internal {

std::string_view kind_name(KeyKind kind) {
  switch (kind) {
    case KeyKind::kString:
      return "string";
    case KeyKind::kBoolean:
      return "boolean";
    case KeyKind::kInteger:
      return "integer";
    case KeyKind::kNumber:
      return "number";
    case KeyKind::kStringArray:
      return "array of strings";
    case KeyKind::kIntegerArray:
      return "array of integers";
    case KeyKind::kTable:
      return "table";
    case KeyKind::kTableArray:
      return "array of tables";
  }
  return "?";
}

std::string without_indices(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  bool quoted = false;  // inside a quoted key: brackets there are part of the key
  for (size_t i = 0; i < path.size(); ++i) {
    const char c = path[i];
    if (quoted) {
      out += c;
      if (c == '\\' && i + 1 < path.size()) {
        out += path[++i];
      } else if (c == '"') {
        quoted = false;
      }
      continue;
    }
    if (c == '"') quoted = true;
    if (c == '[') {
      size_t end = i + 1;
      while (end < path.size() && std::isdigit(static_cast<unsigned char>(path[end]))) ++end;
      if (end > i + 1 && end < path.size() && path[end] == ']') {
        out += "[]";
        i = end;
        continue;
      }
    }
    out += c;
  }
  return out;
}

void KeyRecorder::record(std::string_view path, KeyKind kind) {
  std::string key = without_indices(path);
  if (keys_.find(key) == keys_.end()) keys_.emplace(std::move(key), kind);
}

}  // namespace rolter::config_internal
