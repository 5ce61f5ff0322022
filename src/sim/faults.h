// Faults: what can go wrong with one simulated engine, and the per-request decision of which
// fault (if any) a request meets.
//
// The same Faults value is set from the command line (`--fault "engine=1,refuse"`), from the
// control server's JSON API, and read by the engine server. decide_faults() is a pure function of
// the faults, the fleet seed, the engine index and the request's sequence number, so a run with
// a given seed fails exactly the same requests every time.
//
// Thread-safety: value types and pure functions.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <tl/expected.hpp>

namespace rolter::sim {

struct Faults {
  // Close the listening socket: connects fail with ECONNREFUSED until cleared.
  bool refuse = false;
  // Fraction of inference requests answered with `error_status` and an OpenAI error body.
  double error_rate = 0;
  int error_status = 500;
  // When set, every inference request gets 429 with `Retry-After: <value>`.
  std::optional<int64_t> status_429_retry_after_s;
  // Wait this long before the response headers (not scaled by the time scale: it is a fault,
  // not a model of the engine's speed).
  int64_t stall_first_byte_ms = 0;
  // Wait this long before answering POST /tokenize (the inference APIs are not affected), so a
  // test can make tokenisation slow or, with a long stall, hang.
  int64_t tokenize_stall_ms = 0;
  // The simulated decision service, POST /v1/systemone (decision_service.h); the inference APIs
  // are not affected. decision_stall_ms: wait this long before answering (past rolter's 3 s
  // deadline, a timeout). decision_status: when not 0, answer that HTTP status with an error body.
  // decision_garbage: answer 200 with a body that is not JSON. The stall applies first.
  int64_t decision_stall_ms = 0;
  int decision_status = 0;
  bool decision_garbage = false;
  // Multiplies the engine's latencies as its clients see them: every moment of an answer (the
  // response head, each streamed token, the end) comes `slowdown` times as long after the request
  // began to be served (after any stall). 1 = none. The engine's own queue and batch run at their
  // normal pace; only delivery is delayed, so an engine made slow does not also hold more work.
  double slowdown = 1;
  // When set, a stream is cut after this many token events.
  std::optional<int64_t> drop_mid_stream_after_tokens;
  // How the stream is cut: false = FIN after the data already sent (like a crashed process),
  // true = RST (SO_LINGER 0), which may also discard data the peer has not read yet.
  bool drop_with_reset = false;
  // KV event stream faults (kv_publisher.h). kv_skip_seq and kv_garbage are one-shot: they apply
  // to the next published batch and then clear themselves; kv_silent holds until cleared.
  bool kv_skip_seq = false;
  bool kv_garbage = false;
  bool kv_silent = false;
  // When not 0, the engine's context length: an inference request whose prompt has more tokens
  // (the usage count) is answered 400 with the engine's real context-length error
  // (render_context_length_error in api_format.h). Also what /v1/models and /tokenize report as
  // max_model_len. `--max-model-len N` sets it on every engine.
  int64_t max_model_len = 0;

  bool operator==(const Faults&) const = default;
};

// {"refuse":false,"error_rate":0,...}; the optional fields are null when unset.
nlohmann::json faults_to_json(const Faults& faults);

// Reads a JSON object; absent fields take their defaults (the result replaces the engine's
// faults rather than patching them). Returns a message naming the bad field on error.
tl::expected<Faults, std::string> faults_from_json(const nlohmann::json& json);

// Applies comma-separated settings such as "refuse,error_rate=0.5,error_status=503" onto
// `faults`. Keys are the JSON field names; short aliases: 429=N, stall=MS, drop=N, reset,
// tokenize_stall=MS, decision_stall=MS, max_model_len=N. slowdown=F multiplies latencies by F
// (>= 1).
// Returns an error message and leaves `faults` unspecified on failure.
tl::expected<void, std::string> apply_fault_settings(std::string_view settings, Faults& faults);

// One `--fault` flag: "engine=1,refuse" targets engine 1; without engine= (or engine=all) it
// targets every engine.
struct FaultFlag {
  std::optional<size_t> engine;
  std::string settings;  // the rest of the flag, for apply_fault_settings()
};
tl::expected<FaultFlag, std::string> parse_fault_flag(std::string_view flag);

enum class FaultAction {
  kNone,       // serve normally
  kRateLimit,  // 429 with Retry-After
  kError,      // error_status with an error body
};

struct FaultDecision {
  FaultAction action = FaultAction::kNone;
  int status = 200;
  int64_t retry_after_s = 0;
  std::chrono::milliseconds stall{0};
  double slowdown = 1;  // Faults::slowdown
  // Token events to send before cutting a stream; empty = never cut.
  std::optional<int64_t> drop_after_tokens;
  bool drop_with_reset = false;
};

// What request number `request_seq` (0-based, counted per engine) meets. A 429 fault wins over
// error_rate; the stall applies to whatever is answered.
FaultDecision decide_faults(const Faults& faults, uint64_t seed, size_t engine_index,
                            uint64_t request_seq);

}  // namespace rolter::sim
