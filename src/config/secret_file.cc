#include "config/secret_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace rolter {

tl::expected<std::string, std::string> read_secret_file(const std::string& path) {
  const std::string name = "\"" + path + "\"";
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return tl::unexpected("cannot read " + name + ": " + std::strerror(errno));
  std::string value;
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0 && value.size() <= kMaxSecretFileBytes) {
    value.append(buffer, n);
  }
  const bool failed = std::ferror(f) != 0;
  const int read_errno = errno;
  std::fclose(f);
  if (failed) return tl::unexpected("cannot read " + name + ": " + std::strerror(read_errno));
  if (value.size() > kMaxSecretFileBytes) {
    return tl::unexpected(name + " is larger than a secret (" +
                          std::to_string(kMaxSecretFileBytes) + " bytes at most)");
  }
  // What editors and `kubectl create secret --from-file` leave at the end.
  while (!value.empty() && (value.back() == '\n' || value.back() == '\r')) value.pop_back();
  if (value.empty()) return tl::unexpected(name + " is empty");
  if (value.find_first_of("\r\n") != std::string::npos) {
    return tl::unexpected(name + " holds more than one line; a key is one line");
  }
  return value;
}

}  // namespace rolter
