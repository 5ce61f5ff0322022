// A chat.completion.chunk SSE stream → Anthropic Messages events (SPEC §16), the inverse of
// messages_stream_to_chat.cc, in the order Anthropic sends them:
//
//   message_start (usage 0 until known)
//   content_block_start text / content_block_delta text_delta ...      one block per text run
//   content_block_stop, content_block_start tool_use, input_json_delta ...   one per tool call
//   content_block_stop, message_delta {stop_reason, usage}, message_stop
//
// The usage chunk (requested with stream_options.include_usage) usually comes after the chunk
// with finish_reason, so message_delta waits for the usage or for [DONE]. A stream that ends
// without [DONE] or usage after its finish, that never finishes, or that carries an error chunk
// ends with Anthropic's `error` event instead.
#include <set>

#include "translate/anthropic/mapping.h"
#include "translate/anthropic/steps.h"
#include "translate/sse_reader.h"

namespace rolter::anthropic {

namespace {

class ChatStreamToMessages final : public StreamTranslator {
 public:
  explicit ChatStreamToMessages(const TranslateOptions& options) : model_(options.model) {}

  void feed(std::string_view bytes, std::string& out) override {
    reader_.feed(bytes, [&](const SseEvent& event) {
      if (!ended_) on_event(event.data, out);
    });
  }

  void finish(bool clean, std::string& out) override {
    if (ended_) return;
    fail(clean ? "the upstream stream ended before it finished" : "the upstream stream broke", out);
  }

  Usage usage() const override { return usage_; }

 private:
  enum class Block { kNone, kText, kTool };

  void on_event(const std::string& data, std::string& out) {
    if (data == "[DONE]") {
      if (finish_reason_.empty())
        fail("the upstream stream ended without a finish reason", out);
      else
        end(out);
      return;
    }
    Json chunk;
    if (!parse_json(data, chunk) || !chunk.is_object())
      return fail("the upstream sent an unreadable chunk", out);
    if (const Json* error = member(chunk, "error")) {
      const std::string* message = string_member(*error, "message");
      return fail(message ? *message : "the upstream sent an error", out);
    }
    start(chunk, out);
    if (const Json* usage = member(chunk, "usage"); usage != nullptr && usage->is_object()) {
      usage_ = chat_usage(*usage);
      has_usage_ = true;
    }
    if (const Json* choice = first_choice(chunk)) {
      if (const Json* delta = member(*choice, "delta")) on_delta(*delta, out);
      if (ended_) return;
      if (const std::string* finish = string_member(*choice, "finish_reason")) {
        finish_reason_ = *finish;
        close_block(out);
      }
    }
    if (!finish_reason_.empty() && has_usage_) end(out);
  }

  static const Json* first_choice(const Json& chunk) {
    const Json* choices = member(chunk, "choices");
    if (choices == nullptr || !choices->is_array()) return nullptr;
    for (const auto& choice : *choices) {
      const Json* index = member(choice, "index");
      if (index == nullptr || to_u64(*index) == 0u) return &choice;
    }
    return nullptr;
  }

  void start(const Json& chunk, std::string& out) {
    if (started_) return;
    started_ = true;
    const std::string* id = string_member(chunk, "id");
    if (const std::string* model = string_member(chunk, "model")) model_ = *model;
    Json message{{"id", "msg_" + (id ? *id : std::string("upstream"))},
                 {"type", "message"},
                 {"role", "assistant"},
                 {"model", model_},
                 {"content", Json::array()},
                 {"stop_reason", nullptr},
                 {"stop_sequence", nullptr},
                 {"usage", messages_usage_json(usage_)}};
    emit("message_start", Json{{"type", "message_start"}, {"message", std::move(message)}}, out);
  }

  void on_delta(const Json& delta, std::string& out) {
    const std::string* text = string_member(delta, "content");
    if (text == nullptr) text = string_member(delta, "refusal");
    if (text != nullptr && !text->empty()) {
      if (block_ != Block::kText)
        open_block(Block::kText, Json{{"type", "text"}, {"text", ""}}, out);
      emit_delta(Json{{"type", "text_delta"}, {"text", *text}}, out);
    }
    const Json* calls = member(delta, "tool_calls");
    if (calls == nullptr || !calls->is_array()) return;
    for (const auto& call : *calls) {
      if (!on_tool_call(call, out))
        return fail("the upstream interleaved tool-call fragments", out);
    }
  }

  // One tool-call fragment; false when it continues a call that is no longer the open block
  // (Anthropic cannot reopen a block).
  bool on_tool_call(const Json& call, std::string& out) {
    const Json* index_field = member(call, "index");
    const std::optional<uint64_t> given = index_field ? to_u64(*index_field) : std::nullopt;
    const uint64_t index = given.value_or(block_ == Block::kTool ? tool_ : tools_seen_.size());
    const Json* function = member(call, "function");
    if (block_ != Block::kTool || index != tool_) {
      if (!tools_seen_.insert(index).second) return false;
      const std::string* id = string_member(call, "id");
      const std::string* name = function ? string_member(*function, "name") : nullptr;
      tool_ = index;
      open_block(Block::kTool,
                 Json{{"type", "tool_use"},
                      {"id", id ? *id : "toolu_" + std::to_string(index)},
                      {"name", name ? *name : ""},
                      {"input", Json::object()}},
                 out);
    }
    const std::string* arguments = function ? string_member(*function, "arguments") : nullptr;
    if (arguments != nullptr && !arguments->empty()) {
      emit_delta(Json{{"type", "input_json_delta"}, {"partial_json", *arguments}}, out);
    }
    return true;
  }

  void open_block(Block kind, Json content_block, std::string& out) {
    close_block(out);
    block_ = kind;
    emit("content_block_start",
         Json{{"type", "content_block_start"},
              {"index", index_},
              {"content_block", std::move(content_block)}},
         out);
  }

  void close_block(std::string& out) {
    if (block_ == Block::kNone) return;
    emit("content_block_stop", Json{{"type", "content_block_stop"}, {"index", index_}}, out);
    block_ = Block::kNone;
    ++index_;
  }

  void emit_delta(Json delta, std::string& out) {
    emit("content_block_delta",
         Json{{"type", "content_block_delta"}, {"index", index_}, {"delta", std::move(delta)}},
         out);
  }

  void end(std::string& out) {
    close_block(out);
    Json usage = messages_usage_json(usage_);
    usage.erase("cache_creation_input_tokens");
    Json delta{{"stop_reason", messages_stop_reason(finish_reason_)}, {"stop_sequence", nullptr}};
    emit("message_delta",
         Json{{"type", "message_delta"}, {"delta", std::move(delta)}, {"usage", std::move(usage)}},
         out);
    emit("message_stop", Json{{"type", "message_stop"}}, out);
    ended_ = true;
  }

  void fail(const std::string& message, std::string& out) {
    Json error{{"type", "api_error"}, {"message", message}};
    emit("error", Json{{"type", "error"}, {"error", std::move(error)}}, out);
    ended_ = true;
  }

  static void emit(const char* event, const Json& data, std::string& out) {
    out += "event: ";
    out += event;
    out += "\ndata: ";
    out += dump_json(data);
    out += "\n\n";
  }

  SseReader reader_;
  std::string model_;
  Usage usage_;
  bool has_usage_ = false;
  bool started_ = false;
  Block block_ = Block::kNone;
  uint64_t index_ = 0;             // the Anthropic index of the open block, or of the next one
  uint64_t tool_ = 0;              // the chat tool-call index of the open tool block
  std::set<uint64_t> tools_seen_;  // chat tool-call indexes already given a block
  std::string finish_reason_;      // empty until a choice finished
  bool ended_ = false;             // message_stop or error was sent
};

}  // namespace

std::unique_ptr<StreamTranslator> chat_stream_to_messages(const TranslateOptions& options) {
  return std::make_unique<ChatStreamToMessages>(options);
}

}  // namespace rolter::anthropic
