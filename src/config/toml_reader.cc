#include "config/toml_reader.h"

#include <cmath>
#include <cstdlib>
#include <sstream>

namespace rolter::config_internal {

SourcePos pos_of(const toml::source_region& region) {
  return SourcePos{region.begin.line, region.begin.column};
}

std::string_view type_name(toml::node_type type) {
  switch (type) {
    case toml::node_type::table:
      return "table";
    case toml::node_type::array:
      return "array";
    case toml::node_type::string:
      return "string";
    case toml::node_type::integer:
      return "integer";
    case toml::node_type::floating_point:
      return "float";
    case toml::node_type::boolean:
      return "boolean";
    case toml::node_type::date:
      return "date";
    case toml::node_type::time:
      return "time";
    case toml::node_type::date_time:
      return "date-time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

std::string format_number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  std::ostringstream out;
  out.precision(17);
  out << value;
  // precision(17) round-trips but prints 0.2 as 0.20000000000000001; prefer the short form when
  // it reads back identically.
  std::ostringstream short_out;
  short_out << value;
  if (std::strtod(short_out.str().c_str(), nullptr) == value) return short_out.str();
  return out.str();
}

TableReader::TableReader(const toml::table& table, std::string path, Diagnostics& diag)
    : table_(&table), path_(std::move(path)), diag_(diag) {
  // The root is not a position: whole-file findings ("no [[keys]]") are reported without a line.
  if (!path_.empty()) diag_.remember(path_, pos_of(table.source()));
}

TableReader::TableReader(std::string path, Diagnostics& diag)
    : table_(nullptr), path_(std::move(path)), diag_(diag) {}

const toml::node* TableReader::get(std::string_view key, KeyKind kind) {
  if (table_ == nullptr) return nullptr;
  known_.emplace(key);
  if (KeyRecorder* recorder = diag_.key_recorder()) {
    recorder->record(named_keys_ ? (path_.empty() ? "*" : path_ + ".*") : key_path(key), kind);
  }
  const toml::node* node = table_->get(key);
  if (node != nullptr) diag_.remember(key_path(key), pos_of(node->source()));
  return node;
}

bool TableReader::require(std::string_view key) {
  if (table_ == nullptr) return false;
  if (has(key)) return true;
  diag_.error_at(key_path(key), pos(), "missing required key");
  return false;
}

void TableReader::type_error(const std::string& path, const toml::node& node,
                             std::string_view expected) {
  diag_.error_at(
      path, pos_of(node.source()),
      "expected " + std::string(expected) + ", got " + std::string(type_name(node.type())));
}

void TableReader::read(std::string_view key, std::string& out, bool required) {
  if (required) require(key);  // and still asked for, so the key recorder sees it
  const toml::node* node = get(key, KeyKind::kString);
  if (node == nullptr) return;
  if (const auto* s = node->as_string()) {
    out = s->get();
  } else {
    type_error(key_path(key), *node, "string");
  }
}

void TableReader::read(std::string_view key, bool& out) {
  const toml::node* node = get(key, KeyKind::kBoolean);
  if (node == nullptr) return;
  if (const auto* b = node->as_boolean()) {
    out = b->get();
  } else {
    type_error(key_path(key), *node, "boolean");
  }
}

bool TableReader::check_number(const std::string& path, const toml::node& node, double value,
                               NumberRule rule) {
  const char* problem = nullptr;
  switch (rule) {
    case NumberRule::kNonNegative:
      if (!std::isfinite(value) || value < 0) problem = "must be finite and >= 0";
      break;
    case NumberRule::kPositive:
      if (!std::isfinite(value) || value <= 0) problem = "must be finite and > 0";
      break;
    case NumberRule::kUnit:
      if (!std::isfinite(value) || value < 0 || value > 1) problem = "must be between 0 and 1";
      break;
  }
  if (problem == nullptr) return true;
  diag_.error_at(path, pos_of(node.source()),
                 std::string(problem) + ", got " + format_number(value));
  return false;
}

void TableReader::read(std::string_view key, std::optional<double>& out, NumberRule rule) {
  const toml::node* node = get(key, KeyKind::kNumber);
  if (node == nullptr) return;
  double value = 0;
  // TOML writes 1 and 1.0 differently; a weight or price of 1 is still a number.
  if (const auto* f = node->as_floating_point()) {
    value = f->get();
  } else if (const auto* i = node->as_integer()) {
    value = static_cast<double>(i->get());
  } else {
    type_error(key_path(key), *node, "number");
    return;
  }
  if (check_number(key_path(key), *node, value, rule)) out = value;
}

void TableReader::read(std::string_view key, double& out, NumberRule rule) {
  std::optional<double> value;
  read(key, value, rule);
  if (value) out = *value;
}

bool TableReader::read_integer(std::string_view key, int64_t min, int64_t max, int64_t& out) {
  const toml::node* node = get(key, KeyKind::kInteger);
  if (node == nullptr) return false;
  const auto* i = node->as_integer();
  if (i == nullptr) {
    type_error(key_path(key), *node, "integer");
    return false;
  }
  int64_t value = i->get();
  if (value < min || value > max) {
    std::string bound = value < min ? ">= " + std::to_string(min) : "<= " + std::to_string(max);
    diag_.error_at(key_path(key), pos_of(node->source()),
                   "must be " + bound + ", got " + std::to_string(value));
    return false;
  }
  out = value;
  return true;
}

void TableReader::read(std::string_view key, uint32_t& out, int64_t min, int64_t max) {
  int64_t value = 0;
  if (read_integer(key, min, max, value)) out = static_cast<uint32_t>(value);
}

void TableReader::read(std::string_view key, uint64_t& out, int64_t min, int64_t max) {
  int64_t value = 0;
  if (read_integer(key, min, max, value)) out = static_cast<uint64_t>(value);
}

void TableReader::read(std::string_view key, std::vector<std::string>& out) {
  const toml::array* items = array(key, KeyKind::kStringArray);
  if (items == nullptr) return;
  std::vector<std::string> values;
  bool ok = true;
  std::string base = key_path(key);
  for (size_t i = 0; i < items->size(); ++i) {
    const toml::node& node = *items->get(i);
    std::string path = index_path(base, i);
    diag_.remember(path, pos_of(node.source()));
    if (const auto* s = node.as_string()) {
      values.push_back(s->get());
    } else {
      type_error(path, node, "string");
      ok = false;
    }
  }
  if (ok) out = std::move(values);
}

const toml::table* TableReader::table(std::string_view key) {
  const toml::node* node = get(key, KeyKind::kTable);
  if (node == nullptr) return nullptr;
  const auto* t = node->as_table();
  if (t == nullptr) type_error(key_path(key), *node, "table");
  return t;
}

const toml::array* TableReader::array(std::string_view key, KeyKind kind) {
  const toml::node* node = get(key, kind);
  if (node == nullptr) return nullptr;
  const auto* a = node->as_array();
  if (a == nullptr) type_error(key_path(key), *node, "array");
  return a;
}

const toml::array* TableReader::for_each_table(std::string_view key,
                                               const std::function<void(TableReader&)>& fn) {
  const toml::node* node = get(key, KeyKind::kTableArray);
  if (node == nullptr) return nullptr;
  std::string base = key_path(key);
  const auto* items = node->as_array();
  if (items == nullptr) {
    type_error(base, *node, "array of tables");
    return nullptr;
  }
  for (size_t i = 0; i < items->size(); ++i) {
    const toml::node& item = *items->get(i);
    std::string path = index_path(base, i);
    if (const auto* t = item.as_table()) {
      TableReader reader(*t, path, diag_);
      fn(reader);
    } else {
      diag_.remember(path, pos_of(item.source()));
      type_error(path, item, "table");
      TableReader reader(path, diag_);
      fn(reader);
    }
  }
  return items;
}

void TableReader::for_each_name(const std::function<void(std::string_view name)>& fn) {
  if (table_ == nullptr) return;
  named_keys_ = true;
  for (const auto& [key, node] : *table_) fn(key.str());
}

void TableReader::finish() {
  if (table_ == nullptr) return;
  for (const auto& [key, node] : *table_) {
    if (known_.count(key.str()) != 0) continue;
    diag_.error_at(child_path(path_, key.str()), pos_of(key.source()), "unknown key");
  }
}

}  // namespace rolter::config_internal
