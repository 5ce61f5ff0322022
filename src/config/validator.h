// The semantic validator: the checks of SPEC §3, §4 and §7 that relate values to each other
// (internal to config/).
//
// Runs on the Config the schema walker produced, even when the walk reported errors, so that one
// `rolter check` lists everything; findings on values the walker already rejected are dropped by
// Diagnostics. Errors and warnings are located by key path (see diagnostics.h).
//
// Thread-safety: pure apart from `diag`; call from any thread.
#pragma once

#include "config/config.h"
#include "config/diagnostics.h"

namespace rolter::config_internal {

// `local_secrets`: the config runs here (rolter check, rolter serve), so the environment variables
// and files it names for secrets must exist and hold a value. A control plane validates for nodes
// whose environment it cannot see, and passes false.
void validate_config(const Config& config, Diagnostics& diag, bool local_secrets = false);

}  // namespace rolter::config_internal
