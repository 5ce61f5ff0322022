// An Anthropic Messages SSE stream → chat.completion.chunk events (SPEC §16).
//
// message_start gives the id, model and input usage and opens the stream with a role chunk; text
// deltas become content deltas; each tool_use block becomes one tool call, numbered from 0 in
// block order, whose input_json_delta fragments become argument deltas; message_delta gives the
// finish reason; message_stop closes with a usage chunk (always: SPEC §16's "final usage chunk")
// and [DONE]. An `error` event, an unreadable event, or an end before message_stop ends the
// client stream with an OpenAI error event and no [DONE]. Thinking blocks and pings are skipped.
#include <map>

#include "translate/anthropic/mapping.h"
#include "translate/anthropic/steps.h"
#include "translate/sse_reader.h"

namespace rolter::anthropic {

namespace {

class MessagesStreamToChat final : public StreamTranslator {
 public:
  explicit MessagesStreamToChat(const TranslateOptions& options)
      : model_(options.model), created_(options.created) {}

  void feed(std::string_view bytes, std::string& out) override {
    reader_.feed(bytes, [&](const SseEvent& event) {
      if (!ended_) on_event(event, out);
    });
  }

  void finish(bool clean, std::string& out) override {
    if (ended_) return;
    fail(clean ? "the upstream stream ended before message_stop" : "the upstream stream broke",
         "server_error", out);
  }

  Usage usage() const override { return usage_.total(); }

 private:
  void on_event(const SseEvent& event, std::string& out) {
    Json data;
    if (!parse_json(event.data, data) || !data.is_object()) {
      fail("the upstream sent an unreadable event", "server_error", out);
      return;
    }
    // The data's own "type" names the event; the "event:" line repeats it.
    const std::string* type = string_member(data, "type");
    const std::string name = type ? *type : event.event;
    if (name == "message_start")
      on_message_start(data, out);
    else if (name == "content_block_start")
      on_block_start(data, out);
    else if (name == "content_block_delta")
      on_block_delta(data, out);
    else if (name == "message_delta")
      on_message_delta(data, out);
    else if (name == "message_stop")
      on_message_stop(out);
    else if (name == "error")
      on_error(data, out);
    // ping, content_block_stop and unknown events carry nothing for the client.
  }

  void on_message_start(const Json& data, std::string& out) {
    const Json* message = member(data, "message");
    if (message == nullptr) return;
    if (const std::string* id = string_member(*message, "id")) id_ = *id;
    if (const std::string* model = string_member(*message, "model")) model_ = *model;
    if (const Json* usage = member(*message, "usage")) usage_.update(*usage);
    emit(Json{{"role", "assistant"}, {"content", ""}}, nullptr, out);
  }

  void on_block_start(const Json& data, std::string& out) {
    const Json* block = member(data, "content_block");
    const std::string* type = block ? string_member(*block, "type") : nullptr;
    if (type == nullptr) return;
    if (*type == "text") {
      const std::string* text = string_member(*block, "text");
      if (text != nullptr && !text->empty()) emit(Json{{"content", *text}}, nullptr, out);
    } else if (*type == "tool_use") {
      const uint64_t block_index = u64_member(data, "index");
      const size_t tool_index = next_tool_++;
      tool_of_block_[block_index] = tool_index;
      const std::string* id = string_member(*block, "id");
      const std::string* name = string_member(*block, "name");
      Json call{{"index", tool_index},
                {"id", id ? *id : ""},
                {"type", "function"},
                {"function", {{"name", name ? *name : ""}, {"arguments", ""}}}};
      emit(Json{{"tool_calls", Json::array({std::move(call)})}}, nullptr, out);
    }
  }

  void on_block_delta(const Json& data, std::string& out) {
    const Json* delta = member(data, "delta");
    const std::string* type = delta ? string_member(*delta, "type") : nullptr;
    if (type == nullptr) return;
    if (*type == "text_delta") {
      const std::string* text = string_member(*delta, "text");
      if (text != nullptr && !text->empty()) emit(Json{{"content", *text}}, nullptr, out);
    } else if (*type == "input_json_delta") {
      const std::string* fragment = string_member(*delta, "partial_json");
      auto tool = tool_of_block_.find(u64_member(data, "index"));
      if (fragment == nullptr || fragment->empty() || tool == tool_of_block_.end()) return;
      Json call{{"index", tool->second}, {"function", {{"arguments", *fragment}}}};
      emit(Json{{"tool_calls", Json::array({std::move(call)})}}, nullptr, out);
    }
  }

  void on_message_delta(const Json& data, std::string& out) {
    if (const Json* usage = member(data, "usage")) usage_.update(*usage);
    const Json* delta = member(data, "delta");
    const std::string* stop = delta ? string_member(*delta, "stop_reason") : nullptr;
    if (stop != nullptr) emit(Json::object(), chat_finish_reason(*stop), out);
  }

  void on_message_stop(std::string& out) {
    Json chunk = base_chunk();
    chunk["choices"] = Json::array();
    chunk["usage"] = chat_usage_json(usage_.total());
    append_data(dump_json(chunk), out);
    out += "data: [DONE]\n\n";
    ended_ = true;
  }

  void on_error(const Json& data, std::string& out) {
    const Json* error = member(data, "error");
    const std::string* message = error ? string_member(*error, "message") : nullptr;
    const std::string* type = error ? string_member(*error, "type") : nullptr;
    fail(message ? *message : "the upstream sent an error event",
         chat_error_type(type ? *type : ""), out);
  }

  void fail(const std::string& message, const std::string& type, std::string& out) {
    Json error{{"message", message}, {"type", type}, {"param", nullptr}, {"code", nullptr}};
    append_data(dump_json(Json{{"error", std::move(error)}}), out);
    ended_ = true;
  }

  Json base_chunk() const {
    return Json{
        {"id", id_}, {"object", "chat.completion.chunk"}, {"created", created_}, {"model", model_}};
  }

  void emit(Json delta, const char* finish_reason, std::string& out) {
    Json chunk = base_chunk();
    Json choice{{"index", 0}, {"delta", std::move(delta)}, {"logprobs", nullptr}};
    choice["finish_reason"] = finish_reason ? Json(finish_reason) : Json(nullptr);
    chunk["choices"] = Json::array({std::move(choice)});
    append_data(dump_json(chunk), out);
  }

  static void append_data(const std::string& json, std::string& out) {
    out += "data: ";
    out += json;
    out += "\n\n";
  }

  SseReader reader_;
  std::string id_ = "chatcmpl-anthropic";  // until message_start names the message
  std::string model_;
  int64_t created_ = 0;
  MessagesUsage usage_;
  std::map<uint64_t, size_t> tool_of_block_;  // Anthropic block index → chat tool-call index
  size_t next_tool_ = 0;
  bool ended_ = false;  // message_stop or a failure was sent
};

}  // namespace

std::unique_ptr<StreamTranslator> messages_stream_to_chat(const TranslateOptions& options) {
  return std::make_unique<MessagesStreamToChat>(options);
}

}  // namespace rolter::anthropic
