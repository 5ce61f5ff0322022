#include "proxy/request_log.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <string>

#include "common/json_escape.h"

namespace rolter {

namespace {

std::atomic<bool> access_log_on{true};

// Request lines are whole JSON objects, one per line, so they get a logger of their own whose
// pattern adds nothing; it follows the default logger's level.
spdlog::logger& request_logger() {
  static const std::shared_ptr<spdlog::logger> logger = [] {
    auto l = spdlog::stderr_logger_mt("rolter.requests");
    l->set_pattern("%v");
    return l;
  }();
  return *logger;
}

// `{"ts_ms":<now>,"level":<level>,"event":<event>` : the opening every line shares.
std::string line_start(std::string_view level, std::string_view event) {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  std::string json = R"({"ts_ms":)";
  json.append(std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now).count()));
  json.append(R"(,"level":")").append(level).append(R"(","event":")").append(event).append("\"");
  return json;
}

}  // namespace

void log_auth_failure(std::string_view reason, std::string_view path, std::string_view client) {
  if (!spdlog::should_log(spdlog::level::info)) return;
  std::string json = line_start("info", "auth_failed");
  json.append(R"(,"reason":)");
  append_json_string(json, reason);
  json.append(R"(,"path":)");
  append_json_string(json, path);
  json.append(R"(,"client":)");
  append_json_string(json, client);
  json.push_back('}');
  request_logger().info("{}", json);
}

void log_upstream_auth_failure(std::string_view provider, unsigned status,
                               std::string_view upstream_message) {
  if (!spdlog::should_log(spdlog::level::warn)) return;
  std::string json = line_start("warn", "upstream_auth_failed");
  json.append(R"(,"provider":)");
  append_json_string(json, provider);
  json.append(R"(,"status":)").append(std::to_string(status));
  json.append(R"(,"upstream_message":)");
  append_json_string(json, upstream_message);
  json.push_back('}');
  request_logger().warn("{}", json);
}

void set_access_log(bool on) { access_log_on.store(on, std::memory_order_relaxed); }

void log_request(const RequestLogLine& line) {
  if (!access_log_on.load(std::memory_order_relaxed)) return;
  if (!spdlog::should_log(spdlog::level::info)) return;
  std::string json = line_start("info", "request");
  if (!line.key.empty()) {
    json.append(R"(,"key":)");
    append_json_string(json, line.key);
  }
  if (!line.team.empty()) {
    json.append(R"(,"team":)");
    append_json_string(json, line.team);
  }
  json.append(R"(,"route":)");
  append_json_string(json, line.route);
  if (!line.fallbacks.empty()) {
    json.append(R"(,"fallbacks":)");
    append_json_string(json, line.fallbacks);
  }
  json.append(R"(,"target":)");
  append_json_string(json, line.target);
  json.append(R"(,"attempts":)").append(std::to_string(line.attempts));
  json.append(R"(,"status":)").append(std::to_string(line.status));
  if (line.upstream_status != 0 && line.upstream_status != line.status) {
    json.append(R"(,"upstream_status":)").append(std::to_string(line.upstream_status));
  }
  json.append(fmt::format(R"(,"duration_ms":{:.3f})", line.duration_s * 1e3));
  if (line.ttft_s) json.append(fmt::format(R"(,"ttft_ms":{:.3f})", *line.ttft_s * 1e3));
  if (line.tokens_in) json.append(R"(,"tokens_in":)").append(std::to_string(*line.tokens_in));
  if (line.tokens_out) json.append(R"(,"tokens_out":)").append(std::to_string(*line.tokens_out));
  if (!line.complete) json.append(R"(,"complete":false)");
  if (line.usage_estimated) json.append(R"(,"usage_estimated":true)");
  if (!line.limited.empty()) {
    json.append(R"(,"limited":)");
    append_json_string(json, line.limited);
  }
  json.push_back('}');
  request_logger().info("{}", json);
}

}  // namespace rolter
