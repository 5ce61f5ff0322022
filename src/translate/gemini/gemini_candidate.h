// Internal: reading one GenerateContentResponse (a whole answer, or one event of a stream) in
// chat-completions terms. Shared by the whole-answer and the stream translation, so both map
// finish reasons, tool calls and usage the same way.
//
// Thread-safety: free functions over the caller's values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "translate/gemini/gemini_json.h"

namespace rolter::gemini {

// The text and function calls of a candidate's content. Thought parts (thought: true) are left
// out: they are the model's reasoning summary, which a chat client did not ask to see as the
// answer. Other part kinds (executableCode, inlineData output) have no chat equivalent.
struct CandidateParts {
  std::string text;
  Json calls = Json::array();  // the functionCall objects, in order
};
CandidateParts read_parts(const Json& candidate);

// The candidate's index (Gemini omits 0), or `position` when it gives none.
uint64_t candidate_index(const Json& candidate, size_t position);

// An OpenAI tool_call {id, type, function {name, arguments}} for a Gemini functionCall. Gemini
// gives ids only sometimes; the one made up is "call_<candidate>_<n>", so the same answer always
// gets the same ids.
Json tool_call(const Json& function_call, uint64_t candidate, size_t n);

// OpenAI finish_reason for a Gemini finishReason: STOP → stop (tool_calls when the candidate
// called a function), MAX_TOKENS → length, the safety family (SAFETY, RECITATION, BLOCKLIST,
// PROHIBITED_CONTENT, SPII, IMAGE_SAFETY) → content_filter, anything else → stop, or tool_calls
// when the candidate called a function (the client has calls to answer either way).
std::string_view finish_reason(std::string_view gemini_reason, bool called_function);

// Token counts from usageMetadata. completion counts the thinking tokens too (thoughtsTokenCount,
// billed as output, like OpenAI's reasoning tokens inside completion_tokens); prompt counts
// toolUsePromptTokenCount too, so that prompt + completion = total.
struct TokenUsage {
  bool seen = false;
  uint64_t prompt = 0;
  uint64_t completion = 0;
  uint64_t total = 0;
  uint64_t cached = 0;
  uint64_t reasoning = 0;
};
TokenUsage read_usage(const Json& response);
// {prompt_tokens, completion_tokens, total_tokens, prompt_tokens_details {cached_tokens},
// completion_tokens_details {reasoning_tokens}}
Json usage_json(const TokenUsage& usage);

// "chatcmpl-<responseId>", or "chatcmpl-gemini" when the answer has no id.
std::string completion_id(const Json& response);

// options.model, or else the answer's modelVersion.
std::string answer_model(const Json& response, const TranslateOptions& options);

}  // namespace rolter::gemini
