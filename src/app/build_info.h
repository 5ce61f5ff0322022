// What this binary is (SPEC §17): the project's version, the commit it was built from and its
// build type, for `rolter --version` and the rolter_build_info metric.
//
//   std::cout << version_text(build_info()) << "\n";  // rolter 0.1.0 (commit 2f75b0a, Release)
//
// build_info() lives in a source generated at every build (cmake/build_info.cmake), so a new
// commit recompiles that one file and nothing else.
//
// Thread-safety: everything here is immutable; call from any thread.
#pragma once

#include <string>
#include <string_view>

namespace rolter {

struct BuildInfo {
  std::string_view version;     // CMake's project(VERSION), e.g. "0.1.0"
  std::string_view commit;      // short hash, "-dirty" with local changes, or "unknown"
  std::string_view build_type;  // CMAKE_BUILD_TYPE, e.g. "RelWithDebInfo"
};

const BuildInfo& build_info();

// One line for humans and scripts: "rolter 0.1.0 (commit 2f75b0a, RelWithDebInfo)".
std::string version_text(const BuildInfo& info);

}  // namespace rolter
