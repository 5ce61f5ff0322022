#include "proxy/request_log.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <iterator>
#include <string>

#include "common/json_escape.h"
#include "common/mutex.h"
#include "proxy/access_log_writer.h"

namespace rolter {

namespace {

// The application's own request-related lines (auth_failed, upstream_auth_failed), and the access
// log when it goes to stderr: whole JSON objects, one per line, so a logger of their own whose
// pattern adds nothing; it follows the default logger's level. spdlog's console sinks share one
// mutex, so these lines never land inside the application log's.
spdlog::logger& request_logger() {
  static const std::shared_ptr<spdlog::logger> logger = [] {
    auto l = spdlog::stderr_logger_mt("rolter.requests");
    l->set_pattern("%v");
    return l;
  }();
  return *logger;
}

void write_to_console(std::string_view line) { request_logger().info("{}", line); }

AccessLogWriter& access_writer() {
  static AccessLogWriter writer(write_to_console);
  return writer;
}

// What server.access_log asked for, and the --no-access-log override.
struct AccessLogChoice {
  Mutex mu;
  std::string configured GUARDED_BY(mu) = "stderr";
  bool forced_off GUARDED_BY(mu) = false;
};

AccessLogChoice& choice() {
  static AccessLogChoice c;
  return c;
}

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// `{"ts_ms":<ts_ms>,"level":<level>,"event":<event>` : the opening every line shares.
void append_line_start(std::string& json, int64_t ts_ms, std::string_view level,
                       std::string_view event) {
  fmt::format_to(std::back_inserter(json), R"({{"ts_ms":{},"level":"{}","event":"{}")", ts_ms,
                 level, event);
}

// `,"name":` and the value as a JSON string; `untrusted`: the value came from the client.
void append_field(std::string& json, std::string_view name, std::string_view value,
                  bool untrusted = false) {
  json.append(",\"").append(name).append("\":");
  if (untrusted) {
    append_untrusted_json_string(json, value);
  } else {
    append_json_string(json, value);
  }
}

void append_number(std::string& json, std::string_view name, uint64_t value) {
  fmt::format_to(std::back_inserter(json), R"(,"{}":{})", name, value);
}

void append_ms(std::string& json, std::string_view name, double seconds) {
  fmt::format_to(std::back_inserter(json), R"(,"{}":{:.3f})", name, seconds * 1e3);
}

// `,"tries":[{"endpoint":...,"status":503,"reason":"status_503","ms":1.234},...]`, each try of a
// disaggregated request with its "step" (prefill, decode).
void append_tries(std::string& json, std::span<const AttemptEntry> tries) {
  if (tries.empty()) return;
  json.append(R"(,"tries":[)");
  for (size_t i = 0; i < tries.size(); ++i) {
    const AttemptEntry& t = tries[i];
    json.append(i == 0 ? R"({"endpoint":)" : R"(,{"endpoint":)");
    append_json_string(json, t.endpoint);
    if (t.status != 0) append_number(json, "status", t.status);
    if (t.reason == AttemptReason::kStatus) {
      fmt::format_to(std::back_inserter(json), R"(,"reason":"status_{}")", t.status);
    } else if (t.reason != AttemptReason::kNone) {
      fmt::format_to(std::back_inserter(json), R"(,"reason":"{}")", attempt_reason_name(t.reason));
    }
    if (t.step != AttemptStep::kWhole) {
      json.append(t.step == AttemptStep::kPrefill ? R"(,"step":"prefill")" : R"(,"step":"decode")");
    }
    fmt::format_to(std::back_inserter(json), R"(,"ms":{:.3f}}})", t.ms);
  }
  json.push_back(']');
}

}  // namespace

void log_auth_failure(std::string_view reason, std::string_view path, std::string_view client) {
  if (!spdlog::should_log(spdlog::level::info)) return;
  std::string json;
  append_line_start(json, now_ms(), "info", "auth_failed");
  append_field(json, "reason", reason);
  append_field(json, "path", path, /*untrusted=*/true);
  append_field(json, "client", client);
  json.push_back('}');
  request_logger().info("{}", json);
}

void log_upstream_auth_failure(std::string_view provider, unsigned status,
                               std::string_view upstream_message) {
  if (!spdlog::should_log(spdlog::level::warn)) return;
  std::string json;
  append_line_start(json, now_ms(), "warn", "upstream_auth_failed");
  append_field(json, "provider", provider);
  append_number(json, "status", status);
  append_field(json, "upstream_message", upstream_message, /*untrusted=*/true);
  json.push_back('}');
  request_logger().warn("{}", json);
}

tl::expected<void, std::string> set_access_log_destination(std::string_view destination) {
  AccessLogChoice& c = choice();
  MutexLock lock(c.mu);
  if (!c.forced_off) {
    if (auto set = access_writer().set_destination(destination); !set) return set;
  }
  c.configured = std::string(destination);
  return {};
}

tl::expected<void, std::string> reopen_access_log() { return access_writer().reopen(); }

std::string access_log_destination() { return access_writer().destination(); }

void set_access_log(bool on) {
  AccessLogChoice& c = choice();
  MutexLock lock(c.mu);
  c.forced_off = !on;
  auto set = access_writer().set_destination(on ? std::string_view(c.configured) : "off");
  if (!set) spdlog::error("server.access_log: {}", set.error());
}

std::string format_request_line(const RequestLogLine& line, int64_t ts_ms) {
  std::string json;
  json.reserve(512);
  append_line_start(json, ts_ms, "info", "request");
  if (!line.request_id.empty()) append_field(json, "request_id", line.request_id, true);
  if (!line.trace_id.empty()) append_field(json, "trace_id", line.trace_id, true);
  if (!line.client.empty()) append_field(json, "client", line.client, true);
  if (!line.method.empty()) append_field(json, "method", line.method, true);
  if (!line.path.empty()) append_field(json, "path", line.path, true);
  if (!line.model.empty()) append_field(json, "model", line.model, true);
  json.append(line.stream ? R"(,"stream":true)" : R"(,"stream":false)");
  if (!line.key.empty()) append_field(json, "key", line.key);
  if (!line.team.empty()) append_field(json, "team", line.team);
  append_field(json, "route", line.route);
  if (!line.fallbacks.empty()) append_field(json, "fallbacks", line.fallbacks);
  append_field(json, "target", line.target);
  if (!line.endpoint.empty()) append_field(json, "endpoint", line.endpoint);
  append_number(json, "attempts", line.attempts);
  append_number(json, "status", line.status);
  if (line.upstream_status != 0) append_number(json, "upstream_status", line.upstream_status);
  append_tries(json, line.tries);
  if (line.queue_ms) append_number(json, "queue_ms", *line.queue_ms);
  append_number(json, "bytes_in", line.bytes_in);
  append_number(json, "bytes_out", line.bytes_out);
  append_ms(json, "duration_ms", line.duration_s);
  if (line.ttft_s) append_ms(json, "ttft_ms", *line.ttft_s);
  if (line.tokens_in) append_number(json, "tokens_in", *line.tokens_in);
  if (line.tokens_out) append_number(json, "tokens_out", *line.tokens_out);
  if (!line.complete) json.append(R"(,"complete":false)");
  if (line.usage_estimated) json.append(R"(,"usage_estimated":true)");
  if (!line.limited.empty()) append_field(json, "limited", line.limited);
  json.push_back('}');
  return json;
}

void log_request(const RequestLogLine& line) {
  AccessLogWriter& writer = access_writer();
  if (!writer.enabled() || !spdlog::should_log(spdlog::level::info)) return;
  writer.write(format_request_line(line, now_ms()));
}

}  // namespace rolter
