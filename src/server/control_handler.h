// ControlHandler: how the data-plane server hands the control plane's HTTP surface (/api/,
// /internal/, /ui/) to the control plane in the same process (SPEC §1, §10).
//
// The server reads the whole request (it is small), calls handle() on the worker thread, and
// writes the answer. handle() may block briefly on the store: admin traffic is rare, and the data
// plane's other connections are served by the other workers meanwhile. A long poll answers with
// `wait_after` set: the server then waits, without holding a thread, until on_change() wakes it or
// the poll's deadline passes, and calls handle() again with `after_wait`.
//
// Thread-safety: every method may be called from any worker thread at once.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rolter {

struct ControlRequest {
  std::string_view method;  // "GET", "POST", ...
  std::string_view target;  // path and query
  std::string_view authorization;
  std::function<std::string_view(std::string_view)> header;  // any other header, "" if absent
  std::string_view body;
  bool after_wait = false;
};

struct ControlResponse {
  unsigned status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  // Set on a long poll with nothing new: wait until the published version differs from this
  // one, then ask again.
  std::optional<uint64_t> wait_after;
};

class ControlHandler {
 public:
  virtual ~ControlHandler() = default;
  // Whether `path` belongs to the control plane.
  virtual bool serves(std::string_view path) const = 0;
  virtual ControlResponse handle(const ControlRequest& request) = 0;
  // Calls `wake` once (from any thread) as soon as the published version differs from `seen`,
  // or at shutdown. Returns a ticket for forget().
  virtual uint64_t on_change(uint64_t seen, std::function<void()> wake) = 0;
  virtual void forget(uint64_t ticket) = 0;
};

}  // namespace rolter
