#include "bench/overhead/launchers.h"

#include <openssl/sha.h>
#include <pwd.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "bench/overhead/proc_stats.h"
#include "bench/overhead/wrk_runner.h"
#include "bench/spawn.h"

namespace rolter::bench::overhead {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPoll = std::chrono::milliseconds(20);
// Another process may take a port between free_port() and a proxy's bind: try a few.
constexpr int kPortAttempts = 3;

bool write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  return static_cast<bool>(f);
}

std::string user_if_root() {
  if (::geteuid() != 0) return {};
  const passwd* pw = ::getpwuid(0);
  return pw ? pw->pw_name : "root";
}

tl::expected<Launched, std::string> start_nginx_once(
    const std::string& nginx_path, const std::string& label, const std::string& dir, int workers,
    const std::function<std::string(const NginxCommon&)>& conf, bool& port_taken) {
  auto port = free_port();
  if (!port) return tl::unexpected(port.error());
  NginxCommon c{dir, *port, workers, user_if_root()};
  const std::string conf_path = dir + "/nginx.conf";
  if (!write_text(conf_path, conf(c))) return tl::unexpected("cannot write " + conf_path);
  auto child = ChildProcess::start(
      label, nginx_path, {"-p", dir + "/", "-c", conf_path, "-e", dir + "/error.log"}, dir);
  if (!child) return tl::unexpected(child.error());
  Launched l{std::move(*child), "http://127.0.0.1:" + std::to_string(*port), {}, conf_path};
  const auto deadline = Clock::now() + kStartDeadline;
  for (;;) {
    if (accepts_connections(*port)) {
      if (workers <= 1) {
        l.pids = {l.process->pid()};
        return l;
      }
      l.pids = find_children(l.process->pid());
      if (static_cast<int>(l.pids.size()) >= workers) return l;
    }
    if (!l.process->running()) {
      const std::string log = read_all(dir + "/error.log");
      port_taken = log.find("Address already in use") != std::string::npos;
      return tl::unexpected(label + " (" + nginx_path + ") exited before it listened:\n" +
                            l.process->log_tail() + read_all(dir + "/error.log"));
    }
    if (Clock::now() > deadline) {
      return tl::unexpected(label + " did not listen within " +
                            std::to_string(kStartDeadline.count()) + " s:\n" +
                            l.process->log_tail());
    }
    std::this_thread::sleep_for(kPoll);
  }
}

tl::expected<Launched, std::string> start_haproxy_once(const std::string& haproxy_path,
                                                       const std::string& dir, int threads,
                                                       uint16_t upstream_port, bool& port_taken) {
  auto port = free_port();
  if (!port) return tl::unexpected(port.error());
  const std::string conf_path = dir + "/haproxy.cfg";
  if (!write_text(conf_path, haproxy_conf(*port, threads, upstream_port))) {
    return tl::unexpected("cannot write " + conf_path);
  }
  auto child = ChildProcess::start("haproxy", haproxy_path, {"-db", "-f", conf_path}, dir);
  if (!child) return tl::unexpected(child.error());
  Launched l{std::move(*child), "http://127.0.0.1:" + std::to_string(*port), {}, conf_path};
  const auto deadline = Clock::now() + kStartDeadline;
  for (;;) {
    if (accepts_connections(*port)) {
      l.pids = {l.process->pid()};  // -db without -W: one process, its threads inside it
      return l;
    }
    if (!l.process->running()) {
      const std::string log = l.process->log_tail();
      port_taken = log.find("Address already in use") != std::string::npos;
      return tl::unexpected("haproxy (" + haproxy_path + ") exited before it listened:\n" + log);
    }
    if (Clock::now() > deadline) {
      return tl::unexpected("haproxy did not listen within " +
                            std::to_string(kStartDeadline.count()) + " s:\n" +
                            l.process->log_tail());
    }
    std::this_thread::sleep_for(kPoll);
  }
}

// Creates `dir`, then runs `once`, again (on the new port it picks) while it reports that the
// port it picked was taken meanwhile, up to kPortAttempts times.
tl::expected<Launched, std::string> start_in_dir(
    const std::string& dir,
    const std::function<tl::expected<Launched, std::string>(bool& port_taken)>& once) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return tl::unexpected("cannot create " + dir + ": " + ec.message());
  tl::expected<Launched, std::string> result;
  for (int attempt = 0; attempt < kPortAttempts; ++attempt) {
    bool port_taken = false;
    result = once(port_taken);
    if (result || !port_taken) break;
  }
  return result;
}

}  // namespace

bool rolter_has_no_access_log(const std::string& rolter_path) {
  const std::string cmd = "'" + rolter_path + "' serve --help 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return false;
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out.find("--no-access-log") != std::string::npos;
}

tl::expected<Launched, std::string> start_nginx(
    const std::string& nginx_path, const std::string& label, const std::string& parent_dir,
    int workers, const std::function<std::string(const NginxCommon&)>& conf) {
  const std::string dir = parent_dir + "/" + label;
  return start_in_dir(dir, [&](bool& port_taken) {
    return start_nginx_once(nginx_path, label, dir, workers, conf, port_taken);
  });
}

tl::expected<Launched, std::string> start_haproxy(const std::string& haproxy_path,
                                                  const std::string& parent_dir, int threads,
                                                  uint16_t upstream_port) {
  const std::string dir = parent_dir + "/haproxy";
  return start_in_dir(dir, [&](bool& port_taken) {
    return start_haproxy_once(haproxy_path, dir, threads, upstream_port, port_taken);
  });
}

std::string rolter_toml(const std::string& upstream_url, int workers,
                        const std::string& provider_fields) {
  return "# Generated by rolter-bench overhead.\n"
         "[server]\nlisten = \"127.0.0.1:0\"\nworkers = " +
         std::to_string(workers) +
         "\n\n[[providers]]\nname = \"upstream\"\nkind = \"openai\"\nbase_url = \"" + upstream_url +
         "\"\n" + provider_fields + "\n[[routes]]\nname = \"bench\"\nstrategy = \"round_robin\"\n"
         "[[routes.targets]]\nprovider = \"upstream\"\nmodel = \"bench\"\n";
}

std::string limited_key_toml(const std::string& redis_socket) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  const std::string key = kLimitedKey;
  SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), digest);
  char hex[2 * SHA256_DIGEST_LENGTH + 1];
  for (size_t i = 0; i < SHA256_DIGEST_LENGTH; ++i) {
    std::snprintf(hex + 2 * i, 3, "%02x", digest[i]);
  }
  std::string toml = "\n[[keys]]\nname = \"bench\"\nkey_sha256 = \"" + std::string(hex) +
                     "\"\n# Far above what the bench sends: counted, never refused.\n"
                     "rpm = 1000000000\nburst = 1000000000\ntpm = 1000000000000\n"
                     "max_in_flight = 1000000\n";
  if (!redis_socket.empty()) {
    toml += "\n[limits]\nbackend = \"redis\"\nredis_url = \"unix://" + redis_socket + "\"\n";
  }
  return toml;
}

std::string flow_control_provider_fields() {
  return "# Far above what the bench sends: the queue is never used, only checked.\n"
         "max_in_flight_per_instance = 100000\n";
}

std::string tracing_toml(const std::string& otlp_endpoint) {
  return "\n[tracing]\notlp_endpoint = \"" + otlp_endpoint + "\"\nsample_ratio = 1.0\n";
}

tl::expected<Launched, std::string> start_redis(const std::string& parent_dir,
                                                std::string& socket_path) {
  socket_path = parent_dir + "/redis.sock";
  const std::vector<std::string> args = {"--port", "0",       "--unixsocket", socket_path,
                                         "--save", "",        "--appendonly", "no",
                                         "--dir",  parent_dir};
  const std::string redis_server = find_executable("redis-server");
  if (redis_server.empty()) {
    return tl::unexpected(std::string("redis-server was not found: install redis-server"));
  }
  auto child = ChildProcess::start("redis", redis_server, args, parent_dir);
  if (!child) return tl::unexpected(child.error());
  Launched l{std::move(*child), "", {}, "", false};
  const auto deadline = Clock::now() + kStartDeadline;
  while (!std::filesystem::exists(socket_path)) {
    if (!l.process->running()) {
      return tl::unexpected("redis-server exited before it listened (install redis-server):\n" +
                            l.process->log_tail());
    }
    if (Clock::now() > deadline) return tl::unexpected(std::string("redis-server did not listen"));
    std::this_thread::sleep_for(kPoll);
  }
  l.pids = {l.process->pid()};
  return l;
}

tl::expected<Launched, std::string> start_rolter(const std::string& rolter_path,
                                                 const std::string& parent_dir,
                                                 const std::string& upstream_url, int workers,
                                                 const std::string& name,
                                                 const std::string& extra_toml,
                                                 const std::string& provider_fields) {
  const std::string config = parent_dir + "/" + name + ".toml";
  if (!write_text(config, rolter_toml(upstream_url, workers, provider_fields) + extra_toml)) {
    return tl::unexpected("cannot write " + config);
  }
  std::vector<std::string> args = {"serve", "--config", config};
  const bool quiet = rolter_has_no_access_log(rolter_path);
  if (quiet) args.push_back("--no-access-log");
  auto child = ChildProcess::start(name, rolter_path, args, parent_dir);
  if (!child) return tl::unexpected(child.error());
  Launched l{std::move(*child), "", {}, config, quiet};
  static const std::regex kListening(R"(listening on (http://127\.0\.0\.1:\d+))");
  const auto deadline = Clock::now() + kStartDeadline;
  for (;;) {
    const std::string err = l.process->stderr_text();
    std::smatch m;
    if (std::regex_search(err, m, kListening)) {
      l.url = m[1];
      l.pids = {l.process->pid()};
      return l;
    }
    if (!l.process->running()) {
      return tl::unexpected("rolter (" + rolter_path + ") exited before it listened:\n" +
                            l.process->log_tail());
    }
    if (Clock::now() > deadline) {
      return tl::unexpected("rolter did not listen within " +
                            std::to_string(kStartDeadline.count()) + " s:\n" +
                            l.process->log_tail());
    }
    std::this_thread::sleep_for(kPoll);
  }
}

}  // namespace rolter::bench::overhead
