#include "app/service_notify.h"

#include <systemd/sd-daemon.h>
#include <time.h>

#include <cstdint>
#include <string>

namespace rolter {
namespace {

void send(const std::string& state) { ::sd_notify(/*unset_environment=*/0, state.c_str()); }

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
  if (::sd_watchdog_enabled(/*unset_environment=*/0, nullptr) > 0) send("WATCHDOG=1");
}

}  // namespace rolter
