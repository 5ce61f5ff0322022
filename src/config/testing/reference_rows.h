// Reads the key tables of docs/configuration.md: every Markdown table whose header row is
// `| Key | Type | Default | Meaning |`, one row per key, the key written as one code span holding
// its full dotted path (`providers[].instances[].base_url`). Other tables are prose and ignored.
// Header-only; tests only.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rolter {

struct ReferenceRow {
  uint32_t line = 0;  // 1-based, in the Markdown file
  std::string key;    // the path inside the code span, or "" when the cell is not one code span
  std::string type;
  std::string default_value;
  std::string meaning;
  size_t cells = 0;  // 4 for a well-formed row
};

namespace reference_rows_internal {

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// The cells of a table row "| a | b \| c |": split on every "|" not escaped with a backslash.
inline std::vector<std::string> cells_of(std::string_view line) {
  line = trim(line);
  if (line.size() < 2 || line.front() != '|' || line.back() != '|') return {};
  line = line.substr(1, line.size() - 2);
  std::vector<std::string> cells;
  std::string cell;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
      cell += '|';
      ++i;
    } else if (line[i] == '|') {
      cells.emplace_back(trim(cell));
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  cells.emplace_back(trim(cell));
  return cells;
}

// "`a.b`" -> "a.b"; anything else (no code span, text around it, two spans) -> "".
inline std::string code_span(std::string_view cell) {
  if (cell.size() < 3 || cell.front() != '`' || cell.back() != '`') return "";
  cell = cell.substr(1, cell.size() - 2);
  if (cell.find('`') != std::string_view::npos) return "";
  return std::string(cell);
}

}  // namespace reference_rows_internal

inline std::vector<ReferenceRow> reference_rows(std::string_view markdown) {
  using namespace reference_rows_internal;
  const std::vector<std::string> header = {"Key", "Type", "Default", "Meaning"};
  std::vector<ReferenceRow> rows;
  bool in_table = false;  // inside a key table, past its header and delimiter rows
  bool in_code = false;   // inside a ``` block, where nothing is a table
  uint32_t number = 0;
  size_t start = 0;
  while (start < markdown.size()) {
    size_t end = markdown.find('\n', start);
    if (end == std::string_view::npos) end = markdown.size();
    const std::string_view line = markdown.substr(start, end - start);
    start = end + 1;
    ++number;
    if (trim(line).substr(0, 3) == "```") {
      in_code = !in_code;
      in_table = false;
      continue;
    }
    if (in_code) continue;
    const std::vector<std::string> cells = cells_of(line);
    if (cells.empty()) {
      in_table = false;
      continue;
    }
    if (cells == header) {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    if (cells.front().find_first_not_of("-: ") == std::string::npos) continue;  // |---|---|
    ReferenceRow row;
    row.line = number;
    row.cells = cells.size();
    row.key = code_span(cells[0]);
    if (cells.size() > 1) row.type = cells[1];
    if (cells.size() > 2) row.default_value = cells[2];
    if (cells.size() > 3) row.meaning = cells[3];
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace rolter
