#include "translate/gemini/gemini_response.h"


#include "translate/gemini/gemini_candidate.h"

namespace rolter::gemini {
namespace {

Json choice(const Json& candidate, size_t position) {
  const uint64_t index = candidate_index(candidate, position);
  CandidateParts parts = read_parts(candidate);
  Json message = {{"role", "assistant"}};
  const bool called = !parts.calls.empty();
  if (called && parts.text.empty())
    message["content"] = nullptr;
  else
    message["content"] = std::move(parts.text);
  if (called) {
    Json calls = Json::array();
    for (size_t n = 0; n < parts.calls.size(); ++n)
      calls.push_back(tool_call(parts.calls[n], index, n));
    message["tool_calls"] = std::move(calls);
  }
  const std::string* reason = string_member(candidate, "finishReason");
  return {{"index", index},
          {"message", std::move(message)},
          {"logprobs", nullptr},
          {"finish_reason", finish_reason(reason ? *reason : "STOP", called)}};
}

Json blocked_choice() {
  return {{"index", 0},
          {"message", {{"role", "assistant"}, {"content", ""}}},
          {"logprobs", nullptr},
          {"finish_reason", "content_filter"}};
}

}  // namespace

tl::expected<std::string, TranslateError> chat_response(std::string_view upstream_body,
                                                        const TranslateOptions& options) {
  const auto response = parse_json(upstream_body);
  if (!response || !response->is_object()) {
    return tl::unexpected(bad_upstream("Gemini's answer is not a JSON object"));
  }
  Json choices = Json::array();
  if (const Json* candidates = array_member(*response, "candidates")) {
    for (size_t i = 0; i < candidates->size(); ++i) choices.push_back(choice((*candidates)[i], i));
  }
  if (choices.empty()) {
    const Json* feedback = object_member(*response, "promptFeedback");
    if (feedback == nullptr || member(*feedback, "blockReason") == nullptr) {
      return tl::unexpected(bad_upstream("Gemini's answer has no candidates"));
    }
    choices.push_back(blocked_choice());
  }
  Json out = {{"id", completion_id(*response)},
              {"object", "chat.completion"},
              {"created", options.created},
              {"model", answer_model(*response, options)},
              {"choices", std::move(choices)}};
  const TokenUsage usage = read_usage(*response);
  if (usage.seen) out["usage"] = usage_json(usage);
  return dump_json(out);
}

}  // namespace rolter::gemini
