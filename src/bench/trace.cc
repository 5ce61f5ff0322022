#include "bench/trace.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>

namespace rolter::bench {
namespace {

tl::unexpected<std::string> fail(std::string_view where, std::string_view what) {
  return tl::unexpected(std::string(where) + ": " + std::string(what));
}

// Reads a non-negative integer field that must fit in `max`.
tl::expected<uint64_t, std::string> read_count(const nlohmann::json& obj, const char* key,
                                               uint64_t max, std::string_view where) {
  auto it = obj.find(key);
  if (it == obj.end()) return fail(where, std::string("missing \"") + key + "\"");
  if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<uint64_t>() > max) {
    return fail(where, std::string("\"") + key + "\" must be a non-negative integer");
  }
  return it->get<uint64_t>();
}

}  // namespace

tl::expected<TraceRequest, std::string> parse_trace_line(std::string_view line,
                                                         std::string_view where) {
  // Trace files are input, not configuration: parse without exceptions and name the line.
  nlohmann::json obj = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (obj.is_discarded()) return fail(where, "not valid JSON");
  if (!obj.is_object()) return fail(where, "expected a JSON object");

  TraceRequest req;
  auto ts = read_count(obj, "timestamp", INT64_MAX, where);
  if (!ts) return tl::unexpected(ts.error());
  auto in = read_count(obj, "input_length", UINT32_MAX, where);
  if (!in) return tl::unexpected(in.error());
  auto out = read_count(obj, "output_length", UINT32_MAX, where);
  if (!out) return tl::unexpected(out.error());
  req.timestamp_ms = static_cast<int64_t>(*ts);
  req.input_length = static_cast<uint32_t>(*in);
  req.output_length = static_cast<uint32_t>(*out);

  auto ids = obj.find("hash_ids");
  if (ids == obj.end() || !ids->is_array()) return fail(where, "\"hash_ids\" must be an array");
  req.hash_ids.reserve(ids->size());
  for (const auto& id : *ids) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0) {
      return fail(where, "\"hash_ids\" must hold non-negative integers");
    }
    req.hash_ids.push_back(id.get<uint64_t>());
  }
  if (req.input_length > req.hash_ids.size() * kTraceBlockTokens) {
    return fail(where, "input_length " + std::to_string(req.input_length) + " exceeds " +
                           std::to_string(req.hash_ids.size()) + " blocks of 512 tokens");
  }
  if (auto s = obj.find("session"); s != obj.end() && s->is_string()) {
    req.session = s->get<std::string>();
  }
  return req;
}

tl::expected<std::vector<TraceRequest>, std::string> read_trace(std::istream& in,
                                                                std::string_view name,
                                                                size_t limit) {
  std::vector<TraceRequest> out;
  std::string line;
  for (size_t lineno = 1; std::getline(in, line); ++lineno) {
    if (std::all_of(line.begin(), line.end(), [](unsigned char c) { return std::isspace(c); })) {
      continue;
    }
    std::string where = std::string(name) + ":" + std::to_string(lineno);
    auto req = parse_trace_line(line, where);
    if (!req) return tl::unexpected(req.error());
    out.push_back(std::move(*req));
    if (limit > 0 && out.size() >= limit) break;
  }
  if (out.empty()) return tl::unexpected(std::string(name) + ": no requests");
  return out;
}

tl::expected<std::vector<TraceRequest>, std::string> read_trace_file(const std::string& path,
                                                                     size_t limit) {
  std::ifstream in(path);
  if (!in) return tl::unexpected("cannot open trace " + path);
  return read_trace(in, path, limit);
}

}  // namespace rolter::bench
