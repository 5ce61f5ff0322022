// ConfigSource: turns rolter.toml into published snapshots, at start and on every reload.
//
// reload() reads and validates the whole file, builds a new snapshot and publishes it. When
// anything fails, the running snapshot stays and every error is logged with file, line and key.
// poll_file_change() lets the caller reload when the file's modification time, size or inode
// changes (SIGHUP does the same on demand).
//
// Thread-safety: not thread-safe; call from the main (control) thread only.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <vector>

#include "balance/balancer_factory.h"
#include "fleet/load_tracker.h"
#include "snapshot/snapshot_store.h"

namespace rolter {

class ConfigSource {
 public:
  // `metrics` may be null; it must outlive the snapshots.
  ConfigSource(std::string path, SnapshotStore& store, LoadTracker& tracker, BalancerDeps deps,
               Metrics* metrics)
      : path_(std::move(path)), store_(store), tracker_(tracker), deps_(deps), metrics_(metrics) {}

  // Loads, validates, builds and publishes. Returns the problems (empty on success); on failure
  // the store keeps its current snapshot.
  std::vector<std::string> reload();

  // True when the file changed since the last reload() (by mtime, size or inode).
  bool file_changed() const;

  uint64_t version() const { return version_; }

 private:
  struct FileStamp {
    bool operator==(const FileStamp&) const = default;
    int64_t mtime_ns = 0;
    int64_t size = -1;
    uint64_t inode = 0;
  };
  FileStamp stamp() const;

  std::string path_;
  SnapshotStore& store_;
  LoadTracker& tracker_;
  BalancerDeps deps_;
  Metrics* metrics_;
  uint64_t version_ = 0;
  FileStamp loaded_stamp_;
};

}  // namespace rolter
