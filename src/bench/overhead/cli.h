// The `overhead` subcommand's command-line interface: every option, with its default, bound to
// an OverheadOptions.
//
// Thread-safety: start-up only.
#pragma once

#include <CLI/CLI.hpp>

#include "bench/overhead/options.h"

namespace rolter::bench::overhead {

// Adds `overhead` to `app`; the options land in `o` when it parses.
CLI::App* add_overhead_command(CLI::App& app, OverheadOptions& o);

}  // namespace rolter::bench::overhead
