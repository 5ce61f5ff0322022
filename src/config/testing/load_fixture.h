// Helpers for the config tests: load TOML text, print findings, and locate expected lines by a
// marker in the text instead of by a hard-coded number (which goes stale when a fixture changes).
// Header-only; tests only.
//
// Usage:
//   const ErrorCase cases[] = {
//       {"[server]\nworkers = -1  # <-\n", "server.workers", "must be >= 0"},
//   };
//   for (const auto& c : cases) expect_one_error(c);
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/loader.h"

namespace rolter {

// The default marker: a TOML comment at the end of the line an error is expected on.
inline constexpr std::string_view kErrorMarker = "# <-";

// Fixtures start with a newline after R"( for readability; dropping it makes line 1 the first
// line of TOML, as line_of() counts.
inline std::string_view without_leading_newline(std::string_view text) {
  if (!text.empty() && text.front() == '\n') text.remove_prefix(1);
  return text;
}

inline tl::expected<LoadedConfig, ConfigErrors> load(std::string_view text) {
  return load_config_text(without_leading_newline(text), "test.toml");
}

// All findings, one per line, for failure messages.
inline std::string dump(const ConfigErrors& errors) {
  std::string out;
  for (const auto& e : errors) out += e.to_string() + "\n";
  return out;
}

// Loads text that must fail and returns its errors.
inline ConfigErrors errors_of(std::string_view text) {
  auto loaded = load(text);
  EXPECT_FALSE(loaded) << "expected errors in:\n" << text;
  return loaded ? ConfigErrors{} : loaded.error();
}

// The 1-based lines (as load() numbers them) that contain `needle`, in order.
inline std::vector<uint32_t> lines_with(std::string_view text, std::string_view needle) {
  text = without_leading_newline(text);
  std::vector<uint32_t> lines;
  uint32_t line = 1;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    if (text.substr(start, end - start).find(needle) != std::string_view::npos) {
      lines.push_back(line);
    }
    start = end + 1;
    ++line;
  }
  return lines;
}

// The first line that contains `needle`; a test failure (and 0) when none does.
inline uint32_t line_of(std::string_view text, std::string_view needle) {
  auto lines = lines_with(text, needle);
  if (lines.empty()) {
    ADD_FAILURE() << "no line contains \"" << needle << "\" in:\n" << text;
    return 0;
  }
  return lines.front();
}

// One TOML text that must fail with exactly one error: at `key`, on the first line containing
// `at`, with `fragment` in its message.
struct ErrorCase {
  std::string toml;
  std::string key;
  std::string fragment;
  std::string at = std::string(kErrorMarker);
};

inline void expect_one_error(const ErrorCase& c) {
  SCOPED_TRACE("key " + c.key + ", TOML:\n" + c.toml);
  const uint32_t line = line_of(c.toml, c.at);
  ConfigErrors errors = errors_of(c.toml);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].file, "test.toml");
  EXPECT_EQ(errors[0].line, line) << dump(errors);
  EXPECT_EQ(errors[0].key, c.key) << dump(errors);
  EXPECT_NE(errors[0].message.find(c.fragment), std::string::npos) << dump(errors);
}

// Each error in turn is on the next line marked `marker`, at the next of `keys`: for texts with
// several errors, each marked where it is expected.
inline void expect_errors_on_marked_lines(std::string_view text,
                                          const std::vector<std::string>& keys,
                                          std::string_view marker = kErrorMarker) {
  SCOPED_TRACE(std::string("TOML:\n") + std::string(text));
  const std::vector<uint32_t> lines = lines_with(text, marker);
  ASSERT_EQ(lines.size(), keys.size()) << "one marker per expected error";
  ConfigErrors errors = errors_of(text);
  ASSERT_EQ(errors.size(), keys.size()) << dump(errors);
  for (size_t i = 0; i < errors.size(); ++i) {
    EXPECT_EQ(errors[i].line, lines[i]) << "error " << i << "\n" << dump(errors);
    EXPECT_EQ(errors[i].key, keys[i]) << "error " << i << "\n" << dump(errors);
    EXPECT_EQ(errors[i].file, "test.toml");
  }
}

// The smallest valid fleet, with a key so that no warning is expected; tests append to it.
inline constexpr std::string_view kMinimal = R"(
[[providers]]
name = "a"
base_url = "http://127.0.0.1:8001"

[[routes]]
name = "m"
[[routes.targets]]
provider = "a"
model = "m1"

[[keys]]
name = "k"
key_env = "K"
)";

// kMinimal followed by `extra`: a bare key in `extra` before any table header belongs to keys[0].
inline std::string minimal_plus(std::string_view extra) {
  return std::string(kMinimal) + std::string(without_leading_newline(extra));
}

}  // namespace rolter
