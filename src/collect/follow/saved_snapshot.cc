#include "collect/follow/saved_snapshot.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace rolter {
namespace {

constexpr std::string_view kPrefix = "# rolter snapshot version ";

std::string errno_text(std::string_view what, const std::string& path) {
  return std::string(what) + " " + path + ": " + std::strerror(errno);
}

// mkdir -p with mode 0700 for every directory it creates; existing ones keep their mode.
tl::expected<void, std::string> make_directories(const std::string& dir) {
  for (size_t slash = dir.find('/', 1);; slash = dir.find('/', slash + 1)) {
    const std::string prefix = dir.substr(0, slash);
    if (!prefix.empty() && ::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      return tl::unexpected(errno_text("creating", prefix));
    }
    if (slash == std::string::npos) return {};
  }
}

tl::expected<void, std::string> write_all(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return tl::unexpected(errno_text("writing", path));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return {};
}

// Makes the rename durable: the directory entry is flushed too.
void sync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

std::string saved_snapshot_path(std::string_view state_dir) {
  return std::string(state_dir) + "/snapshot.toml";
}

std::string saved_snapshot_text(const SavedSnapshot& snapshot, std::string_view origin) {
  std::string text(kPrefix);
  text += std::to_string(snapshot.version);
  if (!origin.empty()) {
    text += ' ';
    text += origin;
  }
  text += '\n';
  text += snapshot.toml;
  return text;
}

tl::expected<SavedSnapshot, std::string> parse_saved_snapshot(std::string_view text) {
  const size_t eol = text.find('\n');
  const std::string_view first = text.substr(0, eol);
  if (first.substr(0, kPrefix.size()) != kPrefix) {
    return tl::unexpected("the first line is not '" + std::string(kPrefix) + "<version>'");
  }
  const std::string_view digits = first.substr(kPrefix.size());
  SavedSnapshot saved;
  const auto [end, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), saved.version);
  if (ec != std::errc() || (end != digits.data() + digits.size() && *end != ' ') ||
      saved.version == 0) {
    return tl::unexpected(std::string("the first line has no valid version"));
  }
  if (eol != std::string_view::npos) saved.toml = std::string(text.substr(eol + 1));
  return saved;
}

tl::expected<std::optional<SavedSnapshot>, std::string> read_saved_snapshot(
    std::string_view state_dir) {
  const std::string path = saved_snapshot_path(state_dir);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<SavedSnapshot>();
    return tl::unexpected(errno_text("opening", path));
  }
  std::string text;
  char chunk[16384];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const auto error = errno_text("reading", path);
      ::close(fd);
      return tl::unexpected(error);
    }
    if (n == 0) break;
    text.append(chunk, static_cast<size_t>(n));
  }
  ::close(fd);
  auto parsed = parse_saved_snapshot(text);
  if (!parsed) return tl::unexpected(path + ": " + parsed.error());
  return std::optional<SavedSnapshot>(std::move(*parsed));
}

tl::expected<void, std::string> write_saved_snapshot(std::string_view state_dir,
                                                     const SavedSnapshot& snapshot,
                                                     std::string_view origin) {
  const std::string dir(state_dir);
  if (auto made = make_directories(dir); !made) return made;
  const std::string path = saved_snapshot_path(dir);
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return tl::unexpected(errno_text("creating", tmp));
  auto written = write_all(fd, saved_snapshot_text(snapshot, origin), tmp);
  if (written && ::fsync(fd) != 0) written = tl::unexpected(errno_text("syncing", tmp));
  if (::close(fd) != 0 && written) written = tl::unexpected(errno_text("closing", tmp));
  if (written && ::rename(tmp.c_str(), path.c_str()) != 0) {
    written = tl::unexpected(errno_text("renaming to", path));
  }
  if (!written) {
    ::unlink(tmp.c_str());
    return written;
  }
  sync_directory(dir);
  return {};
}

}  // namespace rolter
