// FailureRun: which failures of a retried operation are worth a log line. A run of failures is
// logged when it starts and when its cause changes, and its end once, with how many there were;
// the retries in between are not.
//
//   if (run.failed("connection")) spdlog::warn("... failed: {}; retrying", why);
//   ...
//   if (auto n = run.ended()) spdlog::info("... reachable again after {} failures", n);
//
// Thread-safety: none; one retrying thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace rolter {

class FailureRun {
 public:
  // Records a failure of `kind` (a short key: "connection", "status 503"); true when it starts a
  // run or changes its kind.
  bool failed(std::string_view kind) {
    const bool log = failures_++ == 0 || kind != kind_;
    kind_ = kind;
    return log;
  }

  // Records a success; the length of the run it ends (0 = there was none).
  uint64_t ended() {
    kind_.clear();
    return std::exchange(failures_, 0);
  }

 private:
  uint64_t failures_ = 0;
  std::string kind_;
};

}  // namespace rolter
