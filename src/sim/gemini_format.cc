#include "sim/gemini_format.h"

#include <nlohmann/json.hpp>

namespace rolter::sim {
namespace {

using Json = nlohmann::ordered_json;

std::string sse(const Json& payload) { return "data: " + payload.dump() + "\r\n\r\n"; }

const char* gemini_finish(const Completion& c, size_t choice) {
  return std::string_view(c.finish_reason(choice)) == "length" ? "MAX_TOKENS" : "STOP";
}

Json usage_metadata(const Completion& c) {
  const size_t out = c.completion_tokens();
  Json usage = {{"promptTokenCount", c.prompt_tokens},
                {"candidatesTokenCount", out},
                {"totalTokenCount", c.prompt_tokens + out}};
  if (c.cached_tokens > 0) usage["cachedContentTokenCount"] = c.cached_tokens;
  return usage;
}

Json function_call_part(const ToolCall& call) {
  Json args = Json::parse(call.arguments, nullptr, /*allow_exceptions=*/false);
  if (args.is_discarded()) args = Json::object();
  return {{"functionCall", {{"name", call.name}, {"args", std::move(args)}}}};
}

Json candidate(const Json& parts, size_t index, const char* finish) {
  Json out = {{"content", {{"parts", parts}, {"role", "model"}}}};
  if (finish != nullptr) out["finishReason"] = finish;
  out["index"] = index;
  return out;
}

// The parts of candidate `choice` once it is complete.
Json final_parts(const Completion& c, size_t choice, bool streamed) {
  if (c.tool_call && choice == 0) return Json::array({function_call_part(*c.tool_call)});
  return Json::array({{{"text", streamed ? std::string() : c.text(choice)}}});
}

Json response(const Completion& c, Json candidates, bool with_usage) {
  Json out = {{"candidates", std::move(candidates)}};
  if (with_usage) out["usageMetadata"] = usage_metadata(c);
  out["modelVersion"] = c.model;
  out["responseId"] = c.id;
  return out;
}

const char* status_name(int status) {
  switch (status) {
    case 400:
      return "INVALID_ARGUMENT";
    case 401:
      return "UNAUTHENTICATED";
    case 403:
      return "PERMISSION_DENIED";
    case 404:
      return "NOT_FOUND";
    case 409:
      return "ABORTED";
    case 429:
      return "RESOURCE_EXHAUSTED";
    case 499:
      return "CANCELLED";
    case 501:
      return "UNIMPLEMENTED";
    case 503:
      return "UNAVAILABLE";
    case 504:
      return "DEADLINE_EXCEEDED";
    default:
      return status < 500 ? "FAILED_PRECONDITION" : "INTERNAL";
  }
}

}  // namespace

std::string gemini_response(const Completion& c) {
  Json candidates = Json::array();
  for (size_t i = 0; i < c.choices.size(); ++i) {
    candidates.push_back(candidate(final_parts(c, i, false), i, gemini_finish(c, i)));
  }
  return response(c, std::move(candidates), true).dump();
}

std::string gemini_stream_token(const Completion& c, size_t choice, size_t index) {
  if (c.tool_call) return {};
  const Json parts = Json::array({{{"text", c.choices[choice][index]}}});
  return sse(response(c, Json::array({candidate(parts, choice, nullptr)}), false));
}

std::vector<std::string> gemini_stream_epilogue(const Completion& c) {
  Json candidates = Json::array();
  for (size_t i = 0; i < c.choices.size(); ++i) {
    candidates.push_back(candidate(final_parts(c, i, true), i, gemini_finish(c, i)));
  }
  return {sse(response(c, std::move(candidates), true))};
}

std::string gemini_embeddings(const std::vector<Embedding>& data, bool batch) {
  if (!batch) {
    const Json values = data.empty() ? Json::array() : Json(data.front().vector);
    return Json{{"embedding", {{"values", values}}}}.dump();
  }
  Json list = Json::array();
  for (const Embedding& e : data) list.push_back({{"values", e.vector}});
  return Json{{"embeddings", std::move(list)}}.dump();
}

std::string gemini_error(int status, std::string_view message) {
  return Json{{"error", {{"code", status}, {"message", message}, {"status", status_name(status)}}}}
      .dump();
}

}  // namespace rolter::sim
