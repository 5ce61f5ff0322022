#include "app/service_notify.h"

#include <systemd/sd-daemon.h>
#include <time.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "common/mutex.h"
#include "common/shared_library.h"

namespace rolter {
namespace {

// libsystemd's two functions, from libsystemd.so.0 opened at the first message sent under a
// service manager (common/shared_library.h): a gateway started any other way never maps it, nor
// the compression and crypto libraries it pulls in.
struct SdDaemon {
  decltype(&::sd_notify) notify = nullptr;
  decltype(&::sd_watchdog_enabled) watchdog_enabled = nullptr;
};

// The functions, or nullptr when NOTIFY_SOCKET is unset (nothing to tell) or libsystemd cannot be
// loaded (then nothing is told, as when a message is lost; tried once).
const SdDaemon* sd_daemon() {
  struct Loaded {
    Mutex mutex;
    SdDaemon functions GUARDED_BY(mutex);
    bool tried GUARDED_BY(mutex) = false;
  };
  static Loaded loaded;
  if (std::getenv("NOTIFY_SOCKET") == nullptr) return nullptr;
  MutexLock lock(loaded.mutex);
  if (!loaded.tried) {
    loaded.tried = true;
    if (auto lib = SharedLibrary::open("libsystemd.so.0")) {
      SdDaemon d;
      d.notify = lib->symbol<decltype(::sd_notify)>("sd_notify");
      d.watchdog_enabled = lib->symbol<decltype(::sd_watchdog_enabled)>("sd_watchdog_enabled");
      if (d.notify != nullptr && d.watchdog_enabled != nullptr) loaded.functions = d;
    }
  }
  return loaded.functions.notify != nullptr ? &loaded.functions : nullptr;
}

void send(const std::string& state) {
  if (const SdDaemon* sd = sd_daemon()) sd->notify(/*unset_environment=*/0, state.c_str());
}

uint64_t monotonic_usec() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000u + static_cast<uint64_t>(now.tv_nsec) / 1000u;
}

// STATUS= ends at a newline: anything after one would be read as another assignment.
std::string status_line(std::string_view text) {
  std::string line = "STATUS=";
  line.append(text.substr(0, text.find('\n')));
  return line;
}

}  // namespace

void notify_ready(std::string_view status) {
  std::string state = "READY=1";
  if (!status.empty()) state.append("\n").append(status_line(status));
  send(state);
}

void notify_reloading() { send("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(monotonic_usec())); }

void notify_stopping() { send("STOPPING=1"); }

void notify_status(std::string_view text) { send(status_line(text)); }

void notify_watchdog() {
  // sd_watchdog_enabled reads WATCHDOG_USEC (and WATCHDOG_PID): > 0 only when a watchdog is on.
  const SdDaemon* sd = sd_daemon();
  if (sd != nullptr && sd->watchdog_enabled(/*unset_environment=*/0, nullptr) > 0) {
    sd->notify(/*unset_environment=*/0, "WATCHDOG=1");
  }
}

}  // namespace rolter
