// AttemptLog: what each attempt of one request came to, and its time in the queue, for its
// access-log line (SPEC §17, §19).
//
//   AttemptLog tries;                              // on the request's own frame
//   tries.add({.endpoint = url, .status = 503, .reason = AttemptReason::kStatus});
//   line.tries = tries.entries();                  // proxy/request_log.h writes them
//
// Bounded and allocation-free: a fixed array of the first kMaxEntries attempts, each a view of the
// instance's base URL (owned by the snapshot the request pins), its status and why it failed. A
// request that makes more attempts (retry.max_attempts is not capped) still logs its count.
//
// Thread-safety: a value type; one request, one thread.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace rolter {

// Why an attempt did not answer the client. kNone: it did (its answer was relayed).
enum class AttemptReason : uint8_t {
  kNone,
  kConnectRefused,    // "connect_refused": nothing listens there (parks the instance)
  kConnectTimeout,    // "connect_timeout": server.connect_timeout_ms ran out
  kConnectError,      // "connect_error": resolving, routing or the TLS handshake failed
  kSendError,         // "send_error": the request could not be written
  kFirstByteTimeout,  // "first_byte_timeout": no response head within first_byte_timeout_ms
  kDeadline,          // "deadline": the request's upstream_timeout_ms ran out first
  kResponseError,     // "response_error": reset, closed or a bad head before the answer
  kProtocolError,     // "protocol_error": a 101, or too many interim responses
  kStatus,            // "status_NNN": a retry.on_status status (or a 429 kept for a fallback)
  kUpstreamAuth,      // "upstream_auth": the upstream refused the gateway's credentials
  kContextLength,     // "context_length": the prompt is too long for the target
  kContentFilter,     // "content_filter": the target's content filter refused it
  kInternal,          // "internal": the gateway could not build the request (model rewrite)
  kKvTransfer,        // "kv_transfer": a prefill answer without usable kv_transfer_params
  kDisplaced,         // "displaced": a higher band's request took its slot before it answered
};

// Which step of a request the attempt served (SPEC §18). kWhole: the request was not split.
enum class AttemptStep : uint8_t { kWhole, kPrefill, kDecode };

// The reason's name in the log; kStatus is "status", which the log line completes with the status
// ("status_503"). kNone is "".
std::string_view attempt_reason_name(AttemptReason reason);

struct AttemptEntry {
  std::string_view endpoint;  // the instance's base URL
  float ms = 0;               // how long the attempt took, until its answer ended or it failed
  uint16_t status = 0;        // the upstream's status; 0 = no response head
  AttemptReason reason = AttemptReason::kNone;
  AttemptStep step = AttemptStep::kWhole;
};

class AttemptLog {
 public:
  // Eight covers the default of three attempts with fallbacks; the count says when there were more.
  static constexpr size_t kMaxEntries = 8;

  // Keeps `entry` unless kMaxEntries are kept already.
  void add(const AttemptEntry& entry) {
    if (size_ < kMaxEntries) entries_[size_++] = entry;
  }
  std::span<const AttemptEntry> entries() const { return {entries_.data(), size_}; }

  // How long the request waited in its route's queue (SPEC §19), when it did.
  void set_queue_ms(uint64_t ms) { queue_ms_ = ms; }
  std::optional<uint64_t> queue_ms() const { return queue_ms_; }

 private:
  std::array<AttemptEntry, kMaxEntries> entries_{};
  size_t size_ = 0;
  std::optional<uint64_t> queue_ms_;
};

}  // namespace rolter
