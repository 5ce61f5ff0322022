#include "bench/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

namespace rolter::bench {
namespace {

// How long a child may take to print its ready line; both start in well under a second.
constexpr auto kStartTimeout = std::chrono::seconds(20);
// How long a child may take to exit after SIGTERM before it is killed.
constexpr auto kStopGrace = std::chrono::seconds(3);

// The long options a binary's --help mentions, so the bench passes the sim only the model flags
// this build of it knows.
std::string help_text(const std::string& path) {
  std::string cmd = "'" + path + "' --help 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return {};
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out;
}

std::vector<std::string> supported_args(const std::string& sim_path,
                                        const std::vector<std::string>& args) {
  const std::string help = help_text(sim_path);
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const bool is_flag = args[i].rfind("--", 0) == 0;
    const bool takes_value = i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0;
    if (is_flag && help.find(args[i]) == std::string::npos) {
      std::fprintf(stderr, "rolter-bench: this rolter-sim has no %s; not passing it\n",
                   args[i].c_str());
      if (takes_value) ++i;
      continue;
    }
    out.push_back(args[i]);
  }
  return out;
}

}  // namespace

pid_t spawn_child(const std::string& path, const std::vector<std::string>& args, int stdin_fd,
                  const std::string& out_path, const std::string& err_path) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(path.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  // Child: only async-signal-safe calls until exec.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);
  int in = stdin_fd >= 0 ? stdin_fd : ::open("/dev/null", O_RDONLY);
  int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
  int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
  if (in < 0 || out < 0 || err < 0) ::_exit(127);
  ::dup2(in, 0);
  ::dup2(out, 1);
  ::dup2(err, 2);
  ::execv(path.c_str(), argv.data());
  ::_exit(127);
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool exited(pid_t pid) {
  int status = 0;
  return ::waitpid(pid, &status, WNOHANG) == pid;
}

void stop_child(pid_t& pid) {
  if (pid <= 0) return;
  ::kill(pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + kStopGrace;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  pid = -1;
}

Spawner::Spawner(std::string bin_dir) : bin_dir_(std::move(bin_dir)) {}

Spawner::~Spawner() { stop(); }

tl::expected<SpawnedFleet, std::string> Spawner::start(const SpawnOptions& o) {
  char tmpl[] = "/tmp/rolter-bench-XXXXXX";
  if (!::mkdtemp(tmpl)) return tl::unexpected(std::string("cannot create a temporary directory"));
  dir_ = tmpl;
  const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  auto sim = start_sim(o, deadline);
  if (!sim) return tl::unexpected(sim.error());
  SpawnedFleet fleet{.engine_urls = std::move(sim->engine_urls), .control_url = sim->control_url};
  std::string redis_url;
  if (o.shared_state) {
    auto redis = start_redis(deadline);
    if (!redis) return tl::unexpected(redis.error());
    redis_url = std::move(*redis);
  }
  const std::string config = dir_ + "/rolter.toml";
  {
    std::ofstream f(config);
    f << gateway_config(o, fleet.engine_urls, sim->kv_ports, sim->kv_replay_ports, redis_url);
  }
  // The gateways inherit the environment: this process is single-threaded here.
  for (const Tenant& t : o.tenants) ::setenv(t.key_env.c_str(), t.secret.c_str(), 1);
  auto gateways = start_gateways(config, o.nodes, deadline);
  if (!gateways) return tl::unexpected(gateways.error());
  fleet.gateway_urls = std::move(*gateways);
  return fleet;
}

tl::expected<Spawner::Sim, std::string> Spawner::start_sim(const SpawnOptions& o,
                                                           Deadline deadline) {
  const std::string sim_path = bin_dir_ + "/rolter-sim";

  std::vector<std::string> args = {"--engines",
                                   std::to_string(o.engines),
                                   "--port",
                                   "0",
                                   "--control-port",
                                   "0",
                                   "--exit-on-stdin-close",
                                   "--log-level",
                                   "warn",
                                   "--kv-port",
                                   "0",
                                   "--kv-replay"};
  if (o.pd) {
    // Not through supported_args(): a sim without these flags cannot run the split at all.
    if (help_text(sim_path).find("--prefill-engines") == std::string::npos) {
      return tl::unexpected("this rolter-sim has no --prefill-engines: it cannot run --pd " +
                            std::to_string(o.pd->prefill) + ":" + std::to_string(o.pd->decode));
    }
    args.insert(args.end(), {"--prefill-engines", std::to_string(o.pd->prefill), "--decode-engines",
                             std::to_string(o.pd->decode)});
  }
  for (const auto& a : supported_args(sim_path, o.sim_args)) args.push_back(a);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return tl::unexpected(std::string("pipe failed"));
  // The child's end must survive exec: dup2 onto 0 clears O_CLOEXEC.
  sim_pid_ = spawn_child(sim_path, args, fds[0], dir_ + "/sim.out", dir_ + "/sim.err");
  ::close(fds[0]);
  sim_stdin_ = fds[1];
  if (sim_pid_ < 0) return tl::unexpected("cannot start " + sim_path);

  Sim sim;
  for (;;) {
    std::string out = read_all(dir_ + "/sim.out");
    if (auto nl = out.find('\n'); nl != std::string::npos) {
      auto ready = nlohmann::json::parse(out.substr(0, nl), nullptr, false);
      if (ready.is_discarded() || !ready.contains("engines")) {
        return tl::unexpected("bad ready line from rolter-sim: " + out.substr(0, nl));
      }
      for (const auto& e : ready["engines"]) {
        sim.engine_urls.push_back(e.value("url", ""));
        sim.kv_ports.push_back(e.value("kv_port", 0));
        sim.kv_replay_ports.push_back(e.value("kv_replay_port", 0));
      }
      sim.control_url = "http://127.0.0.1:" + std::to_string(ready.value("control_port", 0));
      break;
    }
    if (exited(sim_pid_)) {
      sim_pid_ = -1;
      return tl::unexpected("rolter-sim exited before it was ready:\n" +
                            read_all(dir_ + "/sim.err"));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return tl::unexpected(std::string("rolter-sim did not start in time"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return sim;
}

namespace {

// What every provider of the spawned config carries: engine tokenization and the load settings.
void provider_common(const SpawnOptions& o, std::ostringstream& toml) {
  toml << "tokenize = \"engine\"\ntokenize_timeout_ms = 1000\n";
  if (o.engine_metrics_load) toml << "load_source = \"engine_metrics\"\n";
  if (o.flow_control) {
    toml << "max_in_flight_per_instance = " << o.flow_control->max_in_flight_per_instance << "\n";
  }
}

// One provider over engines [from, to) as [[providers.instances]], with their KV-event streams.
void pd_provider(const SpawnOptions& o, const char* name, const char* role, size_t from, size_t to,
                 const std::vector<std::string>& engine_urls, const std::vector<int>& kv_ports,
                 const std::vector<int>& kv_replay_ports, std::ostringstream& toml) {
  toml << "[[providers]]\nname = \"" << name << "\"\nrole = \"" << role << "\"\n";
  provider_common(o, toml);
  for (size_t i = from; i < to && i < engine_urls.size(); ++i) {
    toml << "[[providers.instances]]\nbase_url = \"" << engine_urls[i] << "\"\n";
    if (kv_ports[i] > 0) {
      toml << "kv_events = { endpoint = \"tcp://127.0.0.1:" << kv_ports[i] << "\"";
      if (kv_replay_ports[i] > 0) {
        toml << ", replay_endpoint = \"tcp://127.0.0.1:" << kv_replay_ports[i] << "\"";
      }
      toml << ", block_size = " << o.block_size << " }\n";
    }
  }
  toml << "\n";
}

// The disaggregated fleet: prefill and decode providers, one disaggregated route per strategy.
void pd_config(const SpawnOptions& o, const std::vector<std::string>& engine_urls,
               const std::vector<int>& kv_ports, const std::vector<int>& kv_replay_ports,
               std::ostringstream& toml) {
  const size_t p = o.pd->prefill;
  pd_provider(o, "pd-prefill", "prefill", 0, p, engine_urls, kv_ports, kv_replay_ports, toml);
  pd_provider(o, "pd-decode", "decode", p, p + o.pd->decode, engine_urls, kv_ports, kv_replay_ports,
              toml);
  for (const auto& s : o.strategies) {
    toml << "[[routes]]\nname = \"" << o.model_prefix << "pd-" << s
         << "\"\nmode = \"disaggregated\"\nmin_uncached_tokens = " << o.min_uncached_tokens
         << "\n[routes.prefill]\nstrategy = \"" << s
         << "\"\ntargets = [{ provider = \"pd-prefill\", model = \"sim-model\" }]\n"
            "[routes.decode]\n"
            "targets = [{ provider = \"pd-decode\", model = \"sim-model\" }]\n\n";
  }
}

}  // namespace

std::string Spawner::gateway_config(const SpawnOptions& o,
                                    const std::vector<std::string>& engine_urls,
                                    const std::vector<int>& kv_ports,
                                    const std::vector<int>& kv_replay_ports,
                                    const std::string& redis_url) {
  std::ostringstream toml;
  toml << "[server]\nlisten = \"127.0.0.1:0\"\nfirst_byte_timeout_ms = 600000\n"
          "upstream_timeout_ms = 3600000\n\n";
  if (!redis_url.empty()) toml << "[shared_state]\nredis_url = \"" << redis_url << "\"\n\n";
  if (o.pd) {
    pd_config(o, engine_urls, kv_ports, kv_replay_ports, toml);
  } else {
    for (size_t i = 0; i < engine_urls.size(); ++i) {
      toml << "[[providers]]\nname = \"engine-" << i << "\"\nbase_url = \"" << engine_urls[i]
           << "\"\n";
      provider_common(o, toml);
      if (kv_ports[i] > 0) {
        toml << "[providers.kv_events]\nendpoint = \"tcp://127.0.0.1:" << kv_ports[i] << "\"\n";
        if (kv_replay_ports[i] > 0) {
          toml << "replay_endpoint = \"tcp://127.0.0.1:" << kv_replay_ports[i] << "\"\n";
        }
        toml << "block_size = " << o.block_size << "\n";
      }
      toml << "\n";
    }
    for (const auto& s : o.strategies) {
      toml << "[[routes]]\nname = \"" << o.model_prefix << s << "\"\nstrategy = \"" << s << "\"\n";
      for (size_t i = 0; i < engine_urls.size(); ++i) {
        toml << "[[routes.targets]]\nprovider = \"engine-" << i << "\"\nmodel = \"sim-model\"\n";
      }
      toml << "\n";
    }
  }
  toml << tenant_keys_toml(o.tenants);
  if (o.flow_control) toml << queue_toml(*o.flow_control);
  return toml.str();
}

tl::expected<std::vector<std::string>, std::string> Spawner::start_gateways(
    const std::string& config, size_t nodes, Deadline deadline) {
  static const std::regex kListening(R"(listening on (http://127\.0\.0\.1:\d+))");
  const std::string rolter_path = bin_dir_ + "/rolter";
  std::vector<std::string> urls;
  for (size_t node = 0; node < std::max<size_t>(nodes, 1); ++node) {
    const std::string log = dir_ + "/rolter-" + std::to_string(node);
    const pid_t pid =
        spawn_child(rolter_path, {"serve", "--config", config, "--listen", "127.0.0.1:0"}, -1,
                    log + ".out", log + ".err");
    if (pid < 0) return tl::unexpected("cannot start " + rolter_path);
    rolter_pids_.push_back(pid);
    for (;;) {
      std::string err = read_all(log + ".err");
      std::smatch m;
      if (std::regex_search(err, m, kListening)) {
        urls.push_back(m[1]);
        break;
      }
      if (exited(rolter_pids_.back())) {
        rolter_pids_.pop_back();
        return tl::unexpected("rolter (node " + std::to_string(node) +
                              ") exited before it listened:\n" + err);
      }
      if (std::chrono::steady_clock::now() > deadline) {
        return tl::unexpected("rolter (node " + std::to_string(node) +
                              ") did not start in time:\n" + err);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  return urls;
}

tl::expected<std::string, std::string> Spawner::start_redis(Deadline deadline) {
  const std::string socket = dir_ + "/redis.sock";
  redis_pid_ = spawn_child("/usr/bin/redis-server",
                           {"--port", "0", "--unixsocket", socket, "--unixsocketperm", "700",
                            "--save", "", "--appendonly", "no", "--dir", dir_},
                           -1, dir_ + "/redis.out", dir_ + "/redis.err");
  if (redis_pid_ < 0) return tl::unexpected(std::string("cannot start /usr/bin/redis-server"));
  while (!std::filesystem::exists(socket)) {
    if (exited(redis_pid_)) {
      redis_pid_ = -1;
      return tl::unexpected("redis-server exited: " + read_all(dir_ + "/redis.out"));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return tl::unexpected(std::string("redis-server did not listen in time"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return "unix://" + socket;
}

void Spawner::stop() {
  for (pid_t& pid : rolter_pids_) stop_child(pid);
  rolter_pids_.clear();
  stop_child(redis_pid_);
  if (sim_stdin_ >= 0) {
    ::close(sim_stdin_);
    sim_stdin_ = -1;
  }
  stop_child(sim_pid_);
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    dir_.clear();
  }
}

}  // namespace rolter::bench
