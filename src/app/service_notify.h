// Tells the service manager where the process is in its life (SPEC §17), with sd_notify(3):
// systemd starts a Type=notify unit's dependents on READY=1, shows STATUS= in `systemctl status`,
// holds `systemctl reload` until READY=1 follows RELOADING=1, and knows a stop is under way from
// STOPPING=1.
//
//   notify_ready("serving");      // listeners bound, first snapshot built
//   notify_reloading();  reload();  notify_ready("serving");
//   notify_stopping();            // draining begins
//
// Every call is a no-op when NOTIFY_SOCKET is unset (not started by systemd) and never fails:
// the service manager missing a message is no reason to stop serving.
//
// Thread-safety: any thread; each call sends one datagram.
#pragma once

#include <string_view>

namespace rolter {

// READY=1, with a STATUS= line when `status` is not empty.
void notify_ready(std::string_view status = {});
// RELOADING=1 with MONOTONIC_USEC= (systemd 253 and later match it to the reload request).
void notify_reloading();
// STOPPING=1.
void notify_stopping();
// STATUS=text, the one line `systemctl status` shows.
void notify_status(std::string_view text);
// WATCHDOG=1, only when the unit asked for one (WatchdogSec=); call it more often than that.
void notify_watchdog();

}  // namespace rolter
