#include "limits/redis/testing/redis_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

namespace rolter {
namespace {

namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;

// A redis-server starts in milliseconds; far longer means the machine is stuck.
constexpr auto kStartDeadline = std::chrono::seconds(20);
constexpr int kPortAttempts = 5;

std::string reply_text(const redisReply* r) {
  if (r == nullptr) return "";
  switch (r->type) {
    case REDIS_REPLY_INTEGER:
      return std::to_string(r->integer);
    case REDIS_REPLY_ARRAY: {
      std::string joined;
      for (size_t i = 0; i < r->elements; ++i) {
        if (i != 0) joined += ',';
        joined += reply_text(r->element[i]);
      }
      return joined;
    }
    case REDIS_REPLY_NIL:
      return "";
    default:
      return std::string(r->str, r->len);
  }
}

}  // namespace

uint16_t free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof addr;
  uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

RedisServer::RedisServer(bool tls) : tls_(tls) {
  char pattern[] = "/tmp/rolter-redis-XXXXXX";
  if (::mkdtemp(pattern) != nullptr) dir_ = pattern;
}

RedisServer::~RedisServer() {
  kill();
  std::error_code ec;
  if (!dir_.empty()) fs::remove_all(dir_, ec);
}

bool RedisServer::start() {
  if (dir_.empty()) {
    error_ = "no temporary directory";
    return false;
  }
  if (tls_ && !fs::exists(ca_file()) && !make_certificates()) return false;
  const bool pick = port_ == 0;
  for (int attempt = 0; attempt < kPortAttempts; ++attempt) {
    if (pick) port_ = free_loopback_port();
    if (pick && tls_) tls_port_ = free_loopback_port();
    if (start_once()) return true;
    if (!pick) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return false;
}

bool RedisServer::start_once() {
  const std::string port = std::to_string(port_);
  const std::string log = dir_ + "/redis.log";
  std::vector<std::string> argv = {
      "redis-server", "--port",       port,       "--bind", "127.0.0.1", "--save", "",
      "--appendonly", "no",           "--dir",    dir_,     "--logfile", log,      "--daemonize",
      "no",           "--unixsocket", unix_path()};
  if (tls_) {
    const std::vector<std::string> tls = {"--tls-port",         std::to_string(tls_port_),
                                          "--tls-cert-file",    dir_ + "/cert.pem",
                                          "--tls-key-file",     dir_ + "/key.pem",
                                          "--tls-ca-cert-file", ca_file(),
                                          "--tls-auth-clients", "no"};
    argv.insert(argv.end(), tls.begin(), tls.end());
  }
  std::vector<char*> args;
  for (auto& arg : argv) args.push_back(arg.data());
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    error_ = "fork failed";
    return false;
  }
  if (pid == 0) {
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execvp("redis-server", args.data());
    ::_exit(127);
  }
  pid_ = pid;
  const auto deadline = SteadyClock::now() + kStartDeadline;
  while (SteadyClock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {  // it died: port taken, or no redis-server
      pid_ = -1;
      error_ = "redis-server exited with status " + std::to_string(status) + " on port " + port;
      return false;
    }
    if (query({"PING"}) == "PONG") return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  error_ = "redis-server did not answer PING on port " + port;
  kill();
  return false;
}

// A CA and a server certificate for localhost / 127.0.0.1 signed by it, made with the openssl
// command (EC keys: fast to generate).
bool RedisServer::make_certificates() {
  const std::string key = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  const std::string cd = "cd '" + dir_ + "' && ";
  const std::string script =
      cd + "openssl req -x509" + key +
      " -keyout ca.key -out ca.pem -days 2 -subj /CN=rolter-test-ca" + " && openssl req" + key +
      " -keyout key.pem -out server.csr -subj /CN=localhost" +
      " && printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > san.cnf" +
      " && openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial" +
      " -out cert.pem -days 2 -extfile san.cnf >/dev/null 2>&1";
  if (std::system((script + " 2>/dev/null").c_str()) != 0 || !fs::exists(dir_ + "/cert.pem")) {
    error_ = "could not make test certificates with the openssl command";
    return false;
  }
  return true;
}

void RedisServer::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGCONT);
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

void RedisServer::pause() {
  if (pid_ > 0) ::kill(pid_, SIGSTOP);
}

void RedisServer::resume() {
  if (pid_ > 0) ::kill(pid_, SIGCONT);
}

std::string RedisServer::query(const std::vector<std::string>& args) const {
  const timeval timeout{1, 0};
  redisContext* c = redisConnectWithTimeout("127.0.0.1", port_, timeout);
  if (c == nullptr) return "";
  std::string text;
  if (c->err == 0) {
    redisSetTimeout(c, timeout);
    std::vector<const char*> argv;
    std::vector<size_t> lengths;
    for (const auto& arg : args) {
      argv.push_back(arg.data());
      lengths.push_back(arg.size());
    }
    auto* reply = static_cast<redisReply*>(
        redisCommandArgv(c, static_cast<int>(args.size()), argv.data(), lengths.data()));
    text = reply_text(reply);
    if (reply != nullptr) freeReplyObject(reply);
  }
  redisFree(c);
  return text;
}

SilentServer::SilentServer() {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof addr;
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::listen(fd_, 128) == 0 &&
      ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &length) == 0) {
    port_ = ntohs(addr.sin_port);
  }
}

SilentServer::~SilentServer() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace rolter
