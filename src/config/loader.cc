// The loader boundary: reads the file, parses it with toml++, walks the schema, validates, and
// turns every failure (including exceptions from toml++) into ConfigError values.
#include "config/loader.h"

#include <toml++/toml.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <cstdio>

#include "config/diagnostics.h"
#include "config/schema.h"
#include "config/validator.h"

namespace rolter {

std::string ConfigError::to_string() const {
  std::string out = file;
  if (line != 0) {
    out += ":" + std::to_string(line);
    if (column != 0) out += ":" + std::to_string(column);
  }
  out += ": ";
  if (!key.empty()) out += key + ": ";
  out += message;
  return out;
}

tl::expected<LoadedConfig, ConfigErrors> load_config_text(std::string_view text,
                                                          std::string source_name,
                                                          LoadOptions options) {
  config_internal::Diagnostics diag(source_name);
  LoadedConfig loaded;
  try {
    toml::table root = toml::parse(text, source_name);
    loaded.config = config_internal::read_config(root, diag);
    config_internal::validate_config(loaded.config, diag, options.local_secrets);
  } catch (const toml::parse_error& e) {
    const toml::source_position& begin = e.source().begin;
    return tl::unexpected(
        ConfigErrors{ConfigError{source_name, begin.line, begin.column, "",
                                 "syntax error: " + std::string(e.description())}});
  } catch (const std::exception& e) {
    // Nothing but allocation failure is expected here; still, a config problem must never take
    // the process down.
    return tl::unexpected(
        ConfigErrors{ConfigError{source_name, 0, 0, "", "cannot load: " + std::string(e.what())}});
  }
  if (diag.has_errors()) return tl::unexpected(diag.take_errors());
  loaded.config.path = std::move(source_name);
  loaded.warnings = diag.take_warnings();
  return loaded;
}

tl::expected<LoadedConfig, ConfigErrors> load_config_file(const std::string& path,
                                                          LoadOptions options) {
  auto fail = [&](const char* what) {
    return tl::unexpected(
        ConfigErrors{ConfigError{path, 0, 0, "", what + std::string(std::strerror(errno))}});
  };
  // stdio rather than ifstream: opening a directory "succeeds" and only the read reports EISDIR,
  // which ifstream would turn into an empty, valid config.
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return fail("cannot open: ");
  std::string text;
  char buffer[8192];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) text.append(buffer, n);
  bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed) return fail("cannot read: ");
  return load_config_text(text, path, options);
}

}  // namespace rolter
