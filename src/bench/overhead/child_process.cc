#include "bench/overhead/child_process.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "bench/spawn.h"

namespace rolter::bench::overhead {
namespace {

std::string last_lines(const std::string& text, size_t lines) {
  std::vector<std::string> all;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    all.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  std::string out;
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) {
    out += (out.empty() ? "" : "\n") + all[i];
  }
  return out;
}

sockaddr_in loopback(uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

}  // namespace

tl::expected<std::unique_ptr<ChildProcess>, std::string> ChildProcess::start(
    const std::string& label, const std::string& path, const std::vector<std::string>& args,
    const std::string& dir) {
  if (::access(path.c_str(), X_OK) != 0) {
    return tl::unexpected("cannot run " + label + ": " + path + ": " + std::strerror(errno));
  }
  const std::string out = dir + "/" + label + ".out";
  const std::string err = dir + "/" + label + ".err";
  const pid_t pid = spawn_child(path, args, -1, out, err);
  if (pid < 0) return tl::unexpected("cannot start " + label + " (" + path + ")");
  return std::unique_ptr<ChildProcess>(new ChildProcess(label, pid, out, err));
}

ChildProcess::~ChildProcess() { stop(); }

bool ChildProcess::running() {
  if (pid_ <= 0) return false;
  if (exited(pid_)) {
    pid_ = -1;
    return false;
  }
  return true;
}

std::string ChildProcess::stderr_text() const { return read_all(err_); }

std::string ChildProcess::log_tail(size_t lines) const {
  std::string out = last_lines(read_all(out_), lines);
  std::string err = last_lines(read_all(err_), lines);
  std::string text;
  if (!out.empty()) text += out + "\n";
  if (!err.empty()) text += err + "\n";
  return text.empty() ? "(no output)\n" : text;
}

void ChildProcess::truncate_logs() const {
  ::truncate(out_.c_str(), 0);
  ::truncate(err_.c_str(), 0);
}

void ChildProcess::stop() { stop_child(pid_); }

tl::expected<uint16_t, std::string> free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return tl::unexpected(std::string("socket: ") + std::strerror(errno));
  sockaddr_in a = loopback(0);
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    return tl::unexpected("cannot find a free port: " + why);
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

bool accepts_connections(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in a = loopback(port);
  // Loopback: refused or accepted at once, so a blocking connect cannot hang.
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

tl::expected<std::string, std::string> make_private_dir(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + prefix + "-XXXXXX";
  if (!::mkdtemp(tmpl.data())) {
    return tl::unexpected("cannot create a temporary directory: " +
                          std::string(std::strerror(errno)));
  }
  return tmpl;
}

}  // namespace rolter::bench::overhead
