#include "app/config_source.h"

#include <spdlog/spdlog.h>

#include "config/loader.h"

namespace rolter {

ConfigSource::FileStamp ConfigSource::stamp() const {
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) return {};
  return FileStamp{static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
                   static_cast<int64_t>(st.st_size), static_cast<uint64_t>(st.st_ino)};
}

bool ConfigSource::file_changed() const { return stamp() != loaded_stamp_; }

std::vector<std::string> ConfigSource::reload() {
  // Taken before reading, so an edit landing during the read triggers one more reload.
  const FileStamp before = stamp();
  loaded_stamp_ = before;
  std::vector<std::string> problems;
  auto loaded = load_config_file(path_);
  if (!loaded) {
    for (const auto& error : loaded.error()) problems.push_back(error.to_string());
    if (metrics_ != nullptr) metrics_->config_reload(false, version_);
    return problems;
  }
  for (const auto& warning : loaded->warnings) spdlog::warn("config: {}", warning.to_string());
  auto snapshot =
      build_snapshot(std::move(loaded->config), tracker_, deps_, version_ + 1, metrics_);
  if (!snapshot) {
    for (const auto& error : snapshot.error()) problems.push_back(path_ + ": " + error);
    if (metrics_ != nullptr) metrics_->config_reload(false, version_);
    return problems;
  }
  ++version_;
  if (metrics_ != nullptr) metrics_->config_reload(true, version_);
  store_.publish(std::move(*snapshot));
  return problems;
}

}  // namespace rolter
