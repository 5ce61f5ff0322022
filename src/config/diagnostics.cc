#include "config/diagnostics.h"

#include <algorithm>

namespace rolter::config_internal {
namespace {

bool is_bare_key(std::string_view key) {
  if (key.empty()) return false;
  for (char c : key) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

void sort_by_position(ConfigErrors& errors) {
  std::stable_sort(errors.begin(), errors.end(), [](const ConfigError& a, const ConfigError& b) {
    if (a.line != b.line) return a.line < b.line;
    return a.column < b.column;
  });
}

}  // namespace

std::string child_path(std::string_view parent, std::string_view key) {
  std::string out(parent);
  if (!out.empty()) out += '.';
  if (is_bare_key(key)) {
    out += key;
  } else {
    out += '"';
    for (char c : key) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out;
}

std::string index_path(std::string_view parent, size_t index) {
  return std::string(parent) + "[" + std::to_string(index) + "]";
}

std::string_view parent_path(std::string_view path) {
  if (path.empty()) return path;
  if (path.back() == ']') {
    size_t open = path.rfind('[');
    return open == std::string_view::npos ? std::string_view() : path.substr(0, open);
  }
  size_t end = path.size();
  if (path.back() == '"') {
    // Skip back over the quoted key (its quotes inside are escaped) to find the separating dot.
    size_t i = path.size() - 1;
    while (i > 0) {
      --i;
      if (path[i] == '"' && (i == 0 || path[i - 1] != '\\')) break;
    }
    end = i;
  }
  size_t dot = path.substr(0, end).rfind('.');
  size_t bracket = path.substr(0, end).rfind('[');
  if (dot == std::string_view::npos) return std::string_view();
  if (bracket != std::string_view::npos && bracket > dot) return path.substr(0, bracket);
  return path.substr(0, dot);
}

SourcePos Diagnostics::where(std::string_view path) const {
  std::string_view p = path;
  while (true) {
    auto it = positions_.find(std::string(p));
    if (it != positions_.end()) return it->second;
    if (p.empty()) return {};
    p = parent_path(p);
  }
}

void Diagnostics::error_at(const std::string& path, SourcePos pos, std::string message) {
  errored_.insert(path);
  errors_.push_back(ConfigError{file_, pos.line, pos.column, path, std::move(message)});
}

bool Diagnostics::has_error_within(std::string_view path) const {
  for (std::string_view p = path; !p.empty(); p = parent_path(p)) {
    if (errored_.count(std::string(p)) != 0) return true;
  }
  return false;
}

void Diagnostics::error(const std::string& path, std::string message) {
  if (has_error_within(path)) return;
  error_at(path, where(path), std::move(message));
}

void Diagnostics::warning(const std::string& path, std::string message) {
  SourcePos pos = where(path);
  warnings_.push_back(ConfigError{file_, pos.line, pos.column, path, std::move(message)});
}

ConfigErrors Diagnostics::take_errors() {
  sort_by_position(errors_);
  return std::move(errors_);
}

ConfigErrors Diagnostics::take_warnings() {
  sort_by_position(warnings_);
  return std::move(warnings_);
}

}  // namespace rolter::config_internal
