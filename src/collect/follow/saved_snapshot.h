// SavedSnapshot: the last configuration document a node applied, kept in
// `{state_dir}/snapshot.toml` so that a restarted node serves it even while the control plane is
// down.
//
// The file is the document with one comment line in front:
//   # rolter snapshot version 42 from https://cp.example:8443 at 2025-01-31T12:00:00Z
//   <the rolter.toml document, byte for byte>
// It is replaced atomically (write `snapshot.toml.tmp`, fsync, rename, fsync the directory), so a
// crash leaves the old document or the new one, never a mix. The directory is created with mode
// 0700 and the file with 0600: the document may hold API-key hashes.
//
// Thread-safety: free functions; callers serialize writes to one directory.
#pragma once

#include <tl/expected.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rolter {

struct SavedSnapshot {
  uint64_t version = 0;
  std::string toml;
};

// The path of the saved document in `state_dir`.
std::string saved_snapshot_path(std::string_view state_dir);

// Reads the saved document: nullopt when there is none; an error when it exists but cannot be read
// or its first line is not the version comment.
tl::expected<std::optional<SavedSnapshot>, std::string> read_saved_snapshot(
    std::string_view state_dir);

// Replaces the saved document. `origin` follows the version in the comment line (where the
// document came from and when); it must not contain a newline.
tl::expected<void, std::string> write_saved_snapshot(std::string_view state_dir,
                                                     const SavedSnapshot& snapshot,
                                                     std::string_view origin);

// The file's contents: the comment line and the document. Exposed for tests.
std::string saved_snapshot_text(const SavedSnapshot& snapshot, std::string_view origin);
// The inverse; an error when the first line is not `# rolter snapshot version <M>...`.
tl::expected<SavedSnapshot, std::string> parse_saved_snapshot(std::string_view text);

}  // namespace rolter
