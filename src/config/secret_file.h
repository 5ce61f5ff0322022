// A secret kept in a file (a provider's api_key_file, SPEC §16), as Kubernetes mounts a Secret:
// the whole file is the value, its trailing line end trimmed. Read when a config is checked and
// each time a snapshot is built (start and every reload), so a rotated file takes effect on the
// next reload without a restart.
//
// Thread-safety: pure apart from the file read.
#pragma once

#include <tl/expected.hpp>

#include <string>

namespace rolter {

// Secrets are short; a larger file is not one (a path pointing at the wrong file).
inline constexpr size_t kMaxSecretFileBytes = 64 * 1024;

// The file's value, or why there is none ("cannot read \"/run/key\": No such file or directory",
// "\"/run/key\" is empty"). The value itself never appears in an error.
tl::expected<std::string, std::string> read_secret_file(const std::string& path);

}  // namespace rolter
