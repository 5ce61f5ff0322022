// Loads and validates rolter.toml (SPEC §3).
//
// Parsing and validation happen in full before anything is used: every problem is collected, each
// with file, line and key, so `rolter check` and a failed reload can report all of them at once.
// Unknown keys are errors. Semantic checks that need the strategy registry (known strategy names)
// are made here too, through balance/balancer_factory.h.
//
// Thread-safety: pure functions; call from any thread.
#pragma once

#include <tl/expected.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace rolter {

struct ConfigError {
  std::string file;
  uint32_t line = 0;    // 0 when unknown (e.g. the file could not be read)
  uint32_t column = 0;  // 0 when unknown
  std::string key;      // dotted path, e.g. "routes[1].targets[0].provider"
  std::string message;

  // "file:line:column: key: message"
  std::string to_string() const;
};

using ConfigErrors = std::vector<ConfigError>;

// Non-fatal findings (e.g. weights set on a strategy that ignores them).
struct LoadedConfig {
  Config config;
  std::vector<ConfigError> warnings;
};

struct LoadOptions {
  // The config runs on this machine (rolter check, rolter serve): the environment variables and
  // files named for secrets (api_key_env, api_key_file) must exist and hold a value. A control
  // plane checks configs for nodes whose environment it cannot see, and leaves this false.
  bool local_secrets = false;
};

// Reads and validates the file at `path`.
tl::expected<LoadedConfig, ConfigErrors> load_config_file(const std::string& path,
                                                          LoadOptions options = {});

// Parses and validates TOML text; `source_name` is used as the file in errors.
tl::expected<LoadedConfig, ConfigErrors> load_config_text(std::string_view text,
                                                          std::string source_name,
                                                          LoadOptions options = {});

}  // namespace rolter
