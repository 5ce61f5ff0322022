#include "translate/gemini/gemini_candidate.h"

namespace rolter::gemini {
namespace {

// Gemini's reasons for stopping because of what the text says rather than its length.
constexpr std::string_view kFiltered[] = {
    "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"};

}  // namespace

CandidateParts read_parts(const Json& candidate) {
  CandidateParts out;
  const Json* content = object_member(candidate, "content");
  const Json* parts = content ? array_member(*content, "parts") : nullptr;
  if (parts == nullptr) return out;
  for (const auto& part : *parts) {
    if (const Json* thought = member(part, "thought"); thought && *thought == true) continue;
    if (const std::string* text = string_member(part, "text")) out.text += *text;
    if (const Json* call = object_member(part, "functionCall")) out.calls.push_back(*call);
  }
  return out;
}

uint64_t candidate_index(const Json& candidate, size_t position) {
  return count_member(candidate, "index").value_or(position);
}

Json tool_call(const Json& function_call, uint64_t candidate, size_t n) {
  const std::string* id = string_member(function_call, "id");
  const std::string* name = string_member(function_call, "name");
  const Json* args = object_member(function_call, "args");
  return {
      {"id",
       id && !id->empty() ? *id : "call_" + std::to_string(candidate) + "_" + std::to_string(n)},
      {"type", "function"},
      {"function",
       {{"name", name ? *name : std::string()},
        {"arguments", args ? dump_json(*args) : std::string("{}")}}}};
}

std::string_view finish_reason(std::string_view gemini_reason, bool called_function) {
  if (gemini_reason == "MAX_TOKENS") return "length";
  for (auto filtered : kFiltered) {
    if (gemini_reason == filtered) return "content_filter";
  }
  return called_function ? "tool_calls" : "stop";
}

TokenUsage read_usage(const Json& response) {
  TokenUsage usage;
  const Json* metadata = object_member(response, "usageMetadata");
  if (metadata == nullptr) return usage;
  usage.seen = true;
  usage.prompt = count_member(*metadata, "promptTokenCount").value_or(0) +
                 count_member(*metadata, "toolUsePromptTokenCount").value_or(0);
  usage.reasoning = count_member(*metadata, "thoughtsTokenCount").value_or(0);
  usage.completion = count_member(*metadata, "candidatesTokenCount").value_or(0) + usage.reasoning;
  usage.total =
      count_member(*metadata, "totalTokenCount").value_or(usage.prompt + usage.completion);
  usage.cached = count_member(*metadata, "cachedContentTokenCount").value_or(0);
  return usage;
}

Json usage_json(const TokenUsage& usage) {
  return {{"prompt_tokens", usage.prompt},
          {"completion_tokens", usage.completion},
          {"total_tokens", usage.total},
          {"prompt_tokens_details", {{"cached_tokens", usage.cached}}},
          {"completion_tokens_details", {{"reasoning_tokens", usage.reasoning}}}};
}

std::string completion_id(const Json& response) {
  const std::string* id = string_member(response, "responseId");
  return "chatcmpl-" + (id && !id->empty() ? *id : std::string("gemini"));
}

std::string answer_model(const Json& response, const TranslateOptions& options) {
  if (!options.model.empty()) return options.model;
  const std::string* version = string_member(response, "modelVersion");
  return version ? *version : std::string();
}

}  // namespace rolter::gemini
