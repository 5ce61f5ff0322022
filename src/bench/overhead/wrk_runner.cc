#include "bench/overhead/wrk_runner.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "bench/overhead/child_process.h"
#include "bench/overhead/workload.h"
#include "bench/spawn.h"

namespace rolter::bench::overhead {
namespace {

using Clock = std::chrono::steady_clock;
// wrk exits right after its duration; this covers its start, the done() hook and a busy machine.
constexpr auto kWrkGrace = std::chrono::seconds(15);

}  // namespace

std::string find_executable(const std::string& name) {
  if (name.empty()) return {};
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  dirs += ":/usr/sbin:/sbin";  // nginx lives in sbin, which a non-root PATH may lack
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string candidate = dirs.substr(start, end - start) + "/" + name;
    if (end > start && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return {};
}

tl::expected<WrkSummary, std::string> run_wrk(const WrkRun& run, const Target& target) {
  const std::string script = run.dir + "/wrk.lua";
  {
    std::ofstream f(script);
    f << wrk_script(request_body(false), target.request_headers(false));
    if (!f) return tl::unexpected("cannot write " + script);
  }
  const int threads = std::clamp(run.threads, 1, run.connections);
  const int seconds = std::max(1, static_cast<int>(std::lround(run.duration_s)));
  auto child = ChildProcess::start(
      "wrk", run.wrk_path,
      {"-t", std::to_string(threads), "-c", std::to_string(run.connections), "-d",
       std::to_string(seconds) + "s", "--timeout", "5s", "-s", script, target.url()},
      run.dir);
  if (!child) return tl::unexpected(child.error());
  const auto deadline = Clock::now() + std::chrono::seconds(seconds) + kWrkGrace;
  while ((*child)->running()) {
    if (Clock::now() > deadline) {
      return tl::unexpected("wrk did not finish in time:\n" + (*child)->log_tail());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto summary = parse_wrk_output(read_all(run.dir + "/wrk.out"));
  if (!summary) return tl::unexpected(summary.error() + "\n" + (*child)->log_tail());
  return summary;
}

}  // namespace rolter::bench::overhead
