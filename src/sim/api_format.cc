#include "sim/api_format.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "sim/float_base64.h"
#include "sim/gemini_format.h"

namespace rolter::sim {
namespace {

using Json = nlohmann::ordered_json;

std::string data_event(const Json& payload) { return "data: " + payload.dump() + "\n\n"; }

std::string named_event(std::string_view name, const Json& payload) {
  std::string out = "event: ";
  out += name;
  out += "\ndata: ";
  out += payload.dump();
  out += "\n\n";
  return out;
}

Json openai_usage(const Completion& c) {
  const size_t completion_tokens = c.completion_tokens();
  return {{"prompt_tokens", c.prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"total_tokens", c.prompt_tokens + completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", c.cached_tokens}}}};
}

// ---- OpenAI chat and completions ---------------------------------------------------------------

bool is_chat(const Completion& c) { return c.api == ApiKind::kChat; }

// The tool call as message.tool_calls[0] (whole), or as the first streamed delta (arguments "").
Json openai_tool_call(const ToolCall& call, bool first_delta) {
  Json out = Json::object();
  if (first_delta) out["index"] = 0;
  out["id"] = call.id;
  out["type"] = "function";
  out["function"] = {{"name", call.name}, {"arguments", first_delta ? "" : call.arguments}};
  return out;
}

Json openai_message(const Completion& c, size_t i) {
  if (!c.tool_call) return {{"role", "assistant"}, {"content", c.text(i)}};
  return {{"role", "assistant"},
          {"content", nullptr},
          {"tool_calls", Json::array({openai_tool_call(*c.tool_call, false)})}};
}

Json openai_choice(const Completion& c, size_t i) {
  Json choice = {{"index", i}};
  if (is_chat(c)) {
    choice["message"] = openai_message(c, i);
  } else {
    choice["text"] = c.text(i);
  }
  choice["logprobs"] = nullptr;
  choice["finish_reason"] = c.finish_reason(i);
  return choice;
}

Json openai_body(const Completion& c) {
  Json choices = Json::array();
  for (size_t i = 0; i < c.choices.size(); ++i) choices.push_back(openai_choice(c, i));
  return {{"id", c.id},           {"object", is_chat(c) ? "chat.completion" : "text_completion"},
          {"created", c.created}, {"model", c.model},
          {"choices", choices},   {"usage", openai_usage(c)}};
}

// A stream chunk. Token and finish chunks carry one choice each, told apart by its `index` (as
// vLLM streams n > 1); the usage chunk carries none.
Json openai_chunk(const Completion& c, Json choices) {
  return {{"id", c.id},
          {"object", is_chat(c) ? "chat.completion.chunk" : "text_completion"},
          {"created", c.created},
          {"model", c.model},
          {"choices", std::move(choices)}};
}

Json openai_token_choice(const Completion& c, size_t choice, size_t index) {
  const std::string& piece = c.choices[choice][index];
  Json out = {{"index", choice}};
  if (is_chat(c) && c.tool_call) {
    out["delta"] = {
        {"tool_calls", Json::array({{{"index", 0}, {"function", {{"arguments", piece}}}}})}};
  } else if (is_chat(c)) {
    Json delta = {{"content", piece}};
    if (index == 0) delta["role"] = "assistant";
    out["delta"] = delta;
  } else {
    out["text"] = piece;
  }
  out["logprobs"] = nullptr;
  out["finish_reason"] = nullptr;
  return out;
}

// The finish chunks of every choice, the usage chunk when asked for, and [DONE].
void openai_epilogue(const Completion& c, std::vector<std::string>& out) {
  for (size_t i = 0; i < c.choices.size(); ++i) {
    Json choice = {{"index", i}, {"logprobs", nullptr}, {"finish_reason", c.finish_reason(i)}};
    if (is_chat(c)) {
      choice["delta"] = Json::object();
    } else {
      choice["text"] = "";
    }
    out.push_back(data_event(openai_chunk(c, Json::array({std::move(choice)}))));
  }
  if (c.include_usage) {
    Json chunk = openai_chunk(c, Json::array());
    chunk["usage"] = openai_usage(c);
    out.push_back(data_event(chunk));
  }
  out.push_back("data: [DONE]\n\n");
}

// ---- Responses API -----------------------------------------------------------------------------

std::string message_item_id(const Completion& c) {
  return "msg_" + c.id.substr(c.id.find('_') + 1);
}

Json responses_usage(const Completion& c) {
  return {{"input_tokens", c.prompt_tokens},
          {"input_tokens_details", {{"cached_tokens", c.cached_tokens}}},
          {"output_tokens", c.completion_tokens()},
          {"output_tokens_details", {{"reasoning_tokens", 0}}},
          {"total_tokens", c.prompt_tokens + c.completion_tokens()}};
}

// The state of a finished response and of its message: cut by max_output_tokens, OpenAI reports
// both "incomplete" and says why in incomplete_details.
const char* responses_final_status(const Completion& c) {
  return c.hit_max_tokens ? "incomplete" : "completed";
}

Json incomplete_details(const Completion& c) {
  if (!c.hit_max_tokens) return nullptr;
  return {{"reason", "max_output_tokens"}};
}

Json responses_text_part(const std::string& text) {
  return {{"type", "output_text"}, {"text", text}, {"annotations", Json::array()}};
}

Json responses_message_item(const Completion& c, bool done) {
  Json content = Json::array();
  if (done) content.push_back(responses_text_part(c.text()));
  return {{"id", message_item_id(c)},
          {"type", "message"},
          {"status", done ? responses_final_status(c) : "in_progress"},
          {"role", "assistant"},
          {"content", content}};
}

Json responses_object(const Completion& c, bool done) {
  Json output = Json::array();
  if (done) output.push_back(responses_message_item(c, true));
  Json r = {{"id", c.id},
            {"object", "response"},
            {"created_at", c.created},
            {"status", done ? responses_final_status(c) : "in_progress"},
            {"incomplete_details", done ? incomplete_details(c) : Json(nullptr)},
            {"model", c.model},
            {"output", output},
            {"usage", nullptr}};
  if (done) r["usage"] = responses_usage(c);
  return r;
}

// Sequence numbers run over the whole stream: 4 prologue events, one per token, then 4 more.
constexpr size_t kResponsesPrologueEvents = 4;

// ---- Anthropic Messages ------------------------------------------------------------------------

Json anthropic_usage(const Completion& c, size_t output_tokens) {
  // Anthropic counts cache reads apart: input_tokens + cache_read_input_tokens is the prompt.
  const size_t cached = std::min(c.cached_tokens, c.prompt_tokens);
  return {{"input_tokens", c.prompt_tokens - cached},
          {"output_tokens", output_tokens},
          {"cache_read_input_tokens", cached},
          {"cache_creation_input_tokens", 0}};
}

const char* stop_reason(const Completion& c) {
  if (c.tool_call) return "tool_use";
  if (!c.stop_hit().empty()) return "stop_sequence";
  return c.hit_max_tokens ? "max_tokens" : "end_turn";
}

Json stop_sequence(const Completion& c) {
  return c.stop_hit().empty() ? Json(nullptr) : Json(c.stop_hit());
}

// The content block: whole when `done`, else as content_block_start opens it.
Json anthropic_block(const Completion& c, bool done) {
  if (!c.tool_call) return {{"type", "text"}, {"text", done ? c.text() : ""}};
  Json input = Json::object();
  if (done) input = Json::parse(c.tool_call->arguments, nullptr, false);
  if (input.is_discarded()) input = Json::object();
  return {{"type", "tool_use"},
          {"id", c.tool_call->id},
          {"name", c.tool_call->name},
          {"input", std::move(input)}};
}

Json anthropic_message(const Completion& c, bool done) {
  Json content = Json::array();
  if (done) content.push_back(anthropic_block(c, true));
  return {{"id", c.id},
          {"type", "message"},
          {"role", "assistant"},
          {"model", c.model},
          {"content", content},
          {"stop_reason", done ? Json(stop_reason(c)) : Json(nullptr)},
          {"stop_sequence", done ? stop_sequence(c) : Json(nullptr)},
          {"usage", anthropic_usage(c, done ? c.length() : 0)}};
}

// The tool call's first delta, sent as soon as the first token is out (as vLLM streams it).
std::vector<std::string> openai_prologue(const Completion& c) {
  if (!is_chat(c) || !c.tool_call) return {};
  Json delta = {{"role", "assistant"},
                {"content", nullptr},
                {"tool_calls", Json::array({openai_tool_call(*c.tool_call, true)})}};
  Json choice = {{"index", 0}, {"delta", delta}, {"logprobs", nullptr}, {"finish_reason", nullptr}};
  return {data_event(openai_chunk(c, Json::array({std::move(choice)})))};
}

}  // namespace

size_t Completion::length() const {
  size_t longest = 0;
  for (const auto& choice : choices) longest = std::max(longest, choice.size());
  return longest;
}

size_t Completion::completion_tokens() const {
  size_t total = 0;
  for (const auto& choice : choices) total += choice.size();
  return total;
}

const std::string& Completion::stop_hit(size_t choice) const {
  static const std::string kNone;
  return choice < stop_hits.size() ? stop_hits[choice] : kNone;
}

const char* Completion::finish_reason(size_t choice) const {
  if (tool_call) return "tool_calls";
  if (!stop_hit(choice).empty()) return "stop";
  return hit_max_tokens ? "length" : "stop";
}

std::string Completion::text(size_t choice) const {
  std::string out;
  if (choice >= choices.size()) return out;
  for (const auto& t : choices[choice]) out += t;
  return out;
}

std::string render_response(const Completion& c) {
  switch (c.api) {
    case ApiKind::kChat:
    case ApiKind::kCompletions:
      return openai_body(c).dump();
    case ApiKind::kResponses:
      return responses_object(c, true).dump();
    case ApiKind::kMessages:
      return anthropic_message(c, true).dump();
    case ApiKind::kGemini:
      return gemini_response(c);
    case ApiKind::kEmbeddings:
    case ApiKind::kGeminiEmbed:
    case ApiKind::kGeminiBatchEmbed:
      break;  // rendered by render_embeddings() or gemini_embeddings()
  }
  return "{}";
}

std::vector<std::string> render_stream_prologue(const Completion& c) {
  switch (c.api) {
    case ApiKind::kResponses: {
      Json in_progress = responses_object(c, false);
      return {
          named_event(
              "response.created",
              {{"type", "response.created"}, {"sequence_number", 0}, {"response", in_progress}}),
          named_event("response.in_progress", {{"type", "response.in_progress"},
                                               {"sequence_number", 1},
                                               {"response", in_progress}}),
          named_event("response.output_item.added", {{"type", "response.output_item.added"},
                                                     {"sequence_number", 2},
                                                     {"output_index", 0},
                                                     {"item", responses_message_item(c, false)}}),
          named_event("response.content_part.added", {{"type", "response.content_part.added"},
                                                      {"sequence_number", 3},
                                                      {"item_id", message_item_id(c)},
                                                      {"output_index", 0},
                                                      {"content_index", 0},
                                                      {"part", responses_text_part("")}}),
      };
    }
    case ApiKind::kMessages:
      return {
          named_event("message_start",
                      {{"type", "message_start"}, {"message", anthropic_message(c, false)}}),
          named_event("content_block_start", {{"type", "content_block_start"},
                                              {"index", 0},
                                              {"content_block", anthropic_block(c, false)}}),
      };
    case ApiKind::kChat:
      return openai_prologue(c);
    default:
      return {};
  }
}

std::string render_stream_token(const Completion& c, size_t choice, size_t index) {
  if (choice >= c.choices.size() || index >= c.choices[choice].size()) return {};
  const std::string& piece = c.choices[choice][index];
  switch (c.api) {
    case ApiKind::kChat:
    case ApiKind::kCompletions:
      return data_event(openai_chunk(c, Json::array({openai_token_choice(c, choice, index)})));
    case ApiKind::kResponses:
      return named_event("response.output_text.delta",
                         {{"type", "response.output_text.delta"},
                          {"sequence_number", kResponsesPrologueEvents + index},
                          {"item_id", message_item_id(c)},
                          {"output_index", 0},
                          {"content_index", 0},
                          {"delta", piece}});
    case ApiKind::kMessages: {
      Json delta = c.tool_call ? Json{{"type", "input_json_delta"}, {"partial_json", piece}}
                               : Json{{"type", "text_delta"}, {"text", piece}};
      return named_event(
          "content_block_delta",
          {{"type", "content_block_delta"}, {"index", 0}, {"delta", std::move(delta)}});
    }
    case ApiKind::kGemini:
      return gemini_stream_token(c, choice, index);
    case ApiKind::kEmbeddings:
    case ApiKind::kGeminiEmbed:
    case ApiKind::kGeminiBatchEmbed:
      break;
  }
  return {};
}

std::vector<std::string> render_stream_epilogue(const Completion& c) {
  std::vector<std::string> out;
  switch (c.api) {
    case ApiKind::kChat:
    case ApiKind::kCompletions:
      openai_epilogue(c, out);
      break;
    case ApiKind::kResponses: {
      const size_t seq = kResponsesPrologueEvents + c.length();
      const std::string text = c.text();
      out.push_back(named_event("response.output_text.done", {{"type", "response.output_text.done"},
                                                              {"sequence_number", seq},
                                                              {"item_id", message_item_id(c)},
                                                              {"output_index", 0},
                                                              {"content_index", 0},
                                                              {"text", text}}));
      out.push_back(
          named_event("response.content_part.done", {{"type", "response.content_part.done"},
                                                     {"sequence_number", seq + 1},
                                                     {"item_id", message_item_id(c)},
                                                     {"output_index", 0},
                                                     {"content_index", 0},
                                                     {"part", responses_text_part(text)}}));
      out.push_back(
          named_event("response.output_item.done", {{"type", "response.output_item.done"},
                                                    {"sequence_number", seq + 2},
                                                    {"output_index", 0},
                                                    {"item", responses_message_item(c, true)}}));
      const std::string last = c.hit_max_tokens ? "response.incomplete" : "response.completed";
      out.push_back(named_event(
          last,
          {{"type", last}, {"sequence_number", seq + 3}, {"response", responses_object(c, true)}}));
      break;
    }
    case ApiKind::kMessages:
      out.push_back(
          named_event("content_block_stop", {{"type", "content_block_stop"}, {"index", 0}}));
      out.push_back(named_event(
          "message_delta",
          {{"type", "message_delta"},
           {"delta", {{"stop_reason", stop_reason(c)}, {"stop_sequence", stop_sequence(c)}}},
           {"usage", {{"output_tokens", c.length()}}}}));
      out.push_back(named_event("message_stop", {{"type", "message_stop"}}));
      break;
    case ApiKind::kGemini:
      return gemini_stream_epilogue(c);
    case ApiKind::kEmbeddings:
    case ApiKind::kGeminiEmbed:
    case ApiKind::kGeminiBatchEmbed:
      break;
  }
  return out;
}

std::string render_embeddings(std::string_view model, const std::vector<Embedding>& data,
                              size_t prompt_tokens, EmbeddingEncoding encoding) {
  Json items = Json::array();
  for (size_t i = 0; i < data.size(); ++i) {
    Json vector = encoding == EmbeddingEncoding::kBase64 ? Json(float32_base64(data[i].vector))
                                                         : Json(data[i].vector);
    items.push_back({{"object", "embedding"}, {"index", i}, {"embedding", std::move(vector)}});
  }
  return Json{{"object", "list"},
              {"data", items},
              {"model", model},
              {"usage", {{"prompt_tokens", prompt_tokens}, {"total_tokens", prompt_tokens}}}}
      .dump();
}

ErrorShape error_shape(ApiKind api) {
  if (api == ApiKind::kMessages) return ErrorShape::kAnthropic;
  return is_gemini(api) ? ErrorShape::kGemini : ErrorShape::kOpenAI;
}

std::string render_error(bool anthropic, int status, std::string_view message) {
  return render_error(anthropic ? ErrorShape::kAnthropic : ErrorShape::kOpenAI, status, message);
}

std::string render_context_length_error(ErrorShape shape, size_t max_len, size_t requested) {
  const std::string m = std::to_string(requested);
  const std::string n = std::to_string(max_len);
  switch (shape) {
    case ErrorShape::kAnthropic:
      return render_error(shape, 400, "prompt is too long: " + m + " tokens > " + n + " maximum");
    case ErrorShape::kGemini:
      return render_error(shape, 400,
                          "The input token count (" + m +
                              ") exceeds the maximum number of tokens allowed (" + n + ").");
    case ErrorShape::kOpenAI:
      break;
  }
  // vLLM's ErrorResponse, as its OpenAI-compatible server sends it.
  return Json{{"object", "error"},
              {"message", "This model's maximum context length is " + n +
                              " tokens. However, you requested " + m +
                              " tokens in the messages, Please reduce the length of the messages."},
              {"type", "BadRequestError"},
              {"param", nullptr},
              {"code", 400}}
      .dump();
}

std::string render_error(ErrorShape shape, int status, std::string_view message) {
  if (shape == ErrorShape::kGemini) return gemini_error(status, message);
  if (shape == ErrorShape::kAnthropic) {
    const char* type = status == 400   ? "invalid_request_error"
                       : status == 401 ? "authentication_error"
                       : status == 403 ? "permission_error"
                       : status == 404 ? "not_found_error"
                       : status == 413 ? "request_too_large"
                       : status == 429 ? "rate_limit_error"
                       : status == 529 ? "overloaded_error"
                                       : "api_error";
    return Json{{"type", "error"}, {"error", {{"type", type}, {"message", message}}}}.dump();
  }
  const char* type = status == 429   ? "rate_limit_error"
                     : status == 404 ? "not_found_error"
                     : status >= 500 ? "server_error"
                                     : "invalid_request_error";
  Json code = nullptr;
  if (status == 429) code = "rate_limit_exceeded";
  if (status == 404) code = "not_found";
  return Json{{"error", {{"message", message}, {"type", type}, {"param", nullptr}, {"code", code}}}}
      .dump();
}

}  // namespace rolter::sim
