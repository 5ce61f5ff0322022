#include "proxy/kv_transfer.h"

#include <nlohmann/json.hpp>
#include <simdjson.h>

namespace rolter {

namespace {
constexpr std::string_view kField = "kv_transfer_params";

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
}  // namespace

std::optional<std::string> prefill_request_body(std::string_view body, std::string_view model) {
  nlohmann::json doc = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return std::nullopt;
  doc["model"] = std::string(model);
  doc["stream"] = false;
  doc.erase("stream_options");
  doc["max_tokens"] = 1;
  if (doc.contains("max_completion_tokens")) doc["max_completion_tokens"] = 1;
  doc[std::string(kField)] = {{"do_remote_decode", true},  {"do_remote_prefill", false},
                              {"remote_engine_id", nullptr}, {"remote_block_ids", nullptr},
                              {"remote_host", nullptr},      {"remote_port", nullptr}};
  // Text that is not UTF-8 is passed on replaced rather than refused: the engine judges it.
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

tl::expected<std::string_view, std::string> kv_transfer_params_of(std::string_view answer) {
  simdjson::ondemand::parser parser;
  simdjson::padded_string padded(answer);
  simdjson::ondemand::document doc;
  if (parser.iterate(padded).get(doc) != simdjson::SUCCESS) {
    return tl::unexpected(std::string("the prefill answer is not JSON"));
  }
  simdjson::ondemand::object object;
  if (doc.get_object().get(object) != simdjson::SUCCESS) {
    return tl::unexpected(std::string("the prefill answer is not a JSON object"));
  }
  simdjson::ondemand::value value;
  if (object.find_field_unordered(kField).get(value) != simdjson::SUCCESS) {
    return tl::unexpected(std::string("the prefill answer has no kv_transfer_params"));
  }
  simdjson::ondemand::object params;
  if (value.get_object().get(params) != simdjson::SUCCESS) {
    return tl::unexpected(std::string("the prefill answer's kv_transfer_params is not an object"));
  }
  std::string_view raw;
  if (params.raw_json().get(raw) != simdjson::SUCCESS) {
    return tl::unexpected(std::string("the prefill answer's kv_transfer_params is not valid JSON"));
  }
  // raw_json() points into the padded copy: find the same bytes in the caller's answer.
  const size_t offset = static_cast<size_t>(raw.data() - padded.data());
  std::string_view text = answer.substr(offset, raw.size());
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  // The on-demand parser skips what it was not asked to read: the whole object is checked here,
  // so a decode engine never gets malformed parameters from the gateway.
  if (!nlohmann::json::accept(text)) {
    return tl::unexpected(std::string("the prefill answer's kv_transfer_params is not valid JSON"));
  }
  return text;
}

bool carries_kv_transfer_params(std::string_view body) {
  // A key: the quoted name, not escaped inside a string, followed by a colon.
  constexpr std::string_view kQuoted = "\"kv_transfer_params\"";
  for (size_t at = body.find(kQuoted); at != std::string_view::npos;
       at = body.find(kQuoted, at + 1)) {
    if (at > 0 && body[at - 1] == '\\') continue;
    size_t next = at + kQuoted.size();
    while (next < body.size() && is_space(body[next])) ++next;
    if (next < body.size() && body[next] == ':') return true;
  }
  return false;
}

std::string with_kv_transfer_params(std::string_view body, std::string_view params) {
  size_t close = body.rfind('}');
  if (close == std::string_view::npos) close = body.size();
  size_t last = close;
  while (last > 0 && is_space(body[last - 1])) --last;
  const bool empty = last > 0 && body[last - 1] == '{';
  std::string out;
  out.reserve(body.size() + params.size() + kField.size() + 4);
  out.append(body.substr(0, last));
  if (!empty) out.push_back(',');
  out.push_back('"');
  out.append(kField);
  out.append("\":");
  out.append(params);
  out.append(body.substr(last));
  return out;
}

}  // namespace rolter
