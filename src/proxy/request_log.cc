#include "proxy/request_log.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <string>

#include "common/json_escape.h"

namespace rolter {

namespace {

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

}  // namespace

void log_request(const RequestLogLine& line) {
  if (!spdlog::should_log(spdlog::level::info)) return;
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  std::string json = R"({"ts_ms":)";
  json.append(std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now).count()));
  json.append(R"(,"level":"info","event":"request","route":)");
  append_json_string(json, line.route);
  json.append(R"(,"target":)");
  append_json_string(json, line.target);
  json.append(R"(,"attempts":)").append(std::to_string(line.attempts));
  json.append(R"(,"status":)").append(std::to_string(line.status));
  json.append(fmt::format(R"(,"duration_ms":{:.3f})", line.duration_s * 1e3));
  if (line.ttft_s) json.append(fmt::format(R"(,"ttft_ms":{:.3f})", *line.ttft_s * 1e3));
  if (line.tokens_in) json.append(R"(,"tokens_in":)").append(std::to_string(*line.tokens_in));
  if (line.tokens_out) json.append(R"(,"tokens_out":)").append(std::to_string(*line.tokens_out));
  if (!line.complete) json.append(R"(,"complete":false)");
  json.push_back('}');
  request_logger().info("{}", json);
}

}  // namespace rolter
