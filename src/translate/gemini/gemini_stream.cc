#include "translate/gemini/gemini_stream.h"

#include <map>

#include "translate/gemini/gemini_candidate.h"
#include "translate/gemini/gemini_error.h"
#include "translate/sse_reader.h"

namespace rolter::gemini {
namespace {

class ChatStream final : public StreamTranslator {
 public:
  explicit ChatStream(const TranslateOptions& options)
      : options_(options), created_(options.created) {}

  void feed(std::string_view bytes, std::string& out) override {
    if (failed_ || closed_) return;
    reader_.feed(bytes, [&](const SseEvent& event) { on_event(event, out); });
  }

  void finish(bool clean, std::string& out) override {
    if (closed_) return;
    closed_ = true;
    if (failed_) return;
    if (!clean || !finished()) {
      fail(openai_error_body(502,
                             clean ? "Gemini's stream ended before it finished"
                                   : "Gemini's stream broke before it finished",
                             ""),
           out);
      return;
    }
    emit({{"id", id_},
          {"object", "chat.completion.chunk"},
          {"created", created_},
          {"model", model_},
          {"choices", Json::array()},
          {"usage", usage_json(usage_)}},
         out);
    out += "data: [DONE]\n\n";
  }

  Usage usage() const override { return {usage_.prompt, usage_.completion, usage_.cached}; }

 private:
  struct ChoiceState {
    size_t calls = 0;
    bool finished = false;
  };

  bool finished() const {
    if (blocked_) return true;
    if (choices_.empty()) return false;
    for (const auto& [index, state] : choices_) {
      if (!state.finished) return false;
    }
    return true;
  }

  void on_event(const SseEvent& event, std::string& out) {
    if (failed_ || event.data == "[DONE]") return;
    const auto response = parse_json(event.data);
    if (!response || !response->is_object()) {
      fail(openai_error_body(502, "Gemini sent a stream event that is not a JSON object", ""), out);
      return;
    }
    if (member(*response, "error") != nullptr) {
      fail(chat_error_from(502, &*response, event.data).body, out);
      return;
    }
    if (id_.empty()) {
      id_ = completion_id(*response);
      model_ = answer_model(*response, options_);
    }
    if (const TokenUsage usage = read_usage(*response); usage.seen) usage_ = usage;
    const Json* candidates = array_member(*response, "candidates");
    if (candidates != nullptr && !candidates->empty()) {
      for (size_t i = 0; i < candidates->size(); ++i) on_candidate((*candidates)[i], i, out);
      return;
    }
    const Json* feedback = object_member(*response, "promptFeedback");
    if (feedback != nullptr && member(*feedback, "blockReason") != nullptr && !blocked_) {
      blocked_ = true;
      start(0, out);
      emit_choice(0, Json::object(), "content_filter", out);
    }
  }

  void on_candidate(const Json& candidate, size_t position, std::string& out) {
    const uint64_t index = candidate_index(candidate, position);
    ChoiceState& state = start(index, out);
    CandidateParts parts = read_parts(candidate);
    if (!parts.text.empty()) emit_choice(index, {{"content", std::move(parts.text)}}, nullptr, out);
    for (const auto& call : parts.calls) {
      Json delta_call = tool_call(call, index, state.calls);
      delta_call["index"] = state.calls++;
      emit_choice(index, {{"tool_calls", Json::array({std::move(delta_call)})}}, nullptr, out);
    }
    const std::string* reason = string_member(candidate, "finishReason");
    if (reason != nullptr && !state.finished) {
      state.finished = true;
      emit_choice(index, Json::object(), finish_reason(*reason, state.calls > 0), out);
    }
  }

  // The state of choice `index`, sending its role chunk the first time.
  ChoiceState& start(uint64_t index, std::string& out) {
    auto [it, fresh] = choices_.try_emplace(index);
    if (fresh) emit_choice(index, {{"role", "assistant"}, {"content", ""}}, nullptr, out);
    return it->second;
  }

  void emit_choice(uint64_t index, Json delta, Json finish, std::string& out) {
    Json choice = {{"index", index},
                   {"delta", std::move(delta)},
                   {"logprobs", nullptr},
                   {"finish_reason", std::move(finish)}};
    emit({{"id", id_},
          {"object", "chat.completion.chunk"},
          {"created", created_},
          {"model", model_},
          {"choices", Json::array({std::move(choice)})}},
         out);
  }

  static void emit(const Json& chunk, std::string& out) {
    out += "data: ";
    out += dump_json(chunk);
    out += "\n\n";
  }

  void fail(const std::string& error_body, std::string& out) {
    failed_ = true;
    out += "data: ";
    out += error_body;
    out += "\n\n";
  }

  const TranslateOptions options_;
  const int64_t created_;
  SseReader reader_;
  std::string id_;
  std::string model_;
  std::map<uint64_t, ChoiceState> choices_;
  TokenUsage usage_;
  bool blocked_ = false;
  bool failed_ = false;
  bool closed_ = false;
};

}  // namespace

std::unique_ptr<StreamTranslator> chat_stream(const TranslateOptions& options) {
  return std::make_unique<ChatStream>(options);
}

}  // namespace rolter::gemini
