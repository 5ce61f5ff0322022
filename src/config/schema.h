// The schema walker: turns a parsed TOML document into a Config (internal to config/).
//
// Checks what can be checked on one value in isolation: the set of keys of every table (SPEC §3
// and §7), value types, numeric ranges, and `base_url` versus [[providers.instances]]. Everything
// that relates values to each other is left to the validator (validator.h). Defaults are the ones
// written in config.h, plus the SPEC's session-key chain for an enabled session_affinity plugin.
//
// Thread-safety: pure apart from `diag`; call from any thread.
#pragma once

#include <toml++/toml.h>

#include "config/config.h"
#include "config/diagnostics.h"

namespace rolter::config_internal {

// Reads every section of `root`; problems go to `diag`, and the affected fields keep their
// defaults so that the walk (and later the validator) can continue.
Config read_config(const toml::table& root, Diagnostics& diag);

}  // namespace rolter::config_internal
