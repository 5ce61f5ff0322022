#include "sim/api_request.h"

#include <nlohmann/json.hpp>

#include "sim/gemini_request.h"
#include "sim/text_generator.h"

namespace rolter::sim {
namespace {

using Json = nlohmann::json;

void append_text(std::string& out, std::string_view text) {
  if (text.empty()) return;
  if (!out.empty()) out += '\n';
  out += text;
}

// Message content: a string, or an array of parts whose text is in "text" (OpenAI
// {type:"text"|"input_text"}, Anthropic {type:"text"}) or, for an Anthropic tool_result block, in
// its own content; other parts (images, tool_use) add no words.
void append_content(std::string& out, const Json& content, int depth = 0) {
  if (content.is_string()) {
    append_text(out, content.get_ref<const std::string&>());
  } else if (content.is_array()) {
    for (const Json& part : content) {
      if (part.is_string()) {
        append_text(out, part.get_ref<const std::string&>());
      } else if (part.is_object()) {
        auto text = part.find("text");
        if (text != part.end() && text->is_string()) {
          append_text(out, text->get_ref<const std::string&>());
        } else if (depth == 0 && part.value("type", Json()) == "tool_result") {
          auto inner = part.find("content");
          if (inner != part.end()) append_content(out, *inner, depth + 1);
        }
      }
    }
  }
}

bool is_token_array(const Json& value) {
  if (!value.is_array() || value.empty()) return false;
  for (const Json& v : value) {
    if (!v.is_number_integer()) return false;
  }
  return true;
}

std::string render_token_ids(const Json& ids) {
  std::string out;
  for (const Json& id : ids) {
    if (!out.empty()) out += ' ';
    out += std::to_string(id.get<int64_t>());
  }
  return out;
}

// Reads the first present key of `keys` as a max-token count.
tl::expected<std::optional<size_t>, std::string> read_max_tokens(
    const Json& body, std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    auto it = body.find(key);
    if (it == body.end() || it->is_null()) continue;
    if (!it->is_number_integer() || it->get<int64_t>() < 0) {
      return tl::make_unexpected(std::string(key) + " must be a non-negative integer");
    }
    return std::optional<size_t>(it->get<uint64_t>());
  }
  return std::optional<size_t>();
}

// Stop sequences under `key`: a string (OpenAI only: `allow_string`) or a list of strings.
tl::expected<void, std::string> read_stop(const Json& body, const char* key, bool allow_string,
                                          ApiRequest& req) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return {};
  if (allow_string && it->is_string()) {
    req.stop.push_back(it->get<std::string>());
    return {};
  }
  const std::string bad = std::string("'") + key + "' must be " +
                          (allow_string ? "a string or " : "") + "a list of strings";
  if (!it->is_array()) return tl::make_unexpected(bad);
  for (const Json& s : *it) {
    if (!s.is_string()) return tl::make_unexpected(bad);
    req.stop.push_back(s.get<std::string>());
  }
  return {};
}

tl::expected<void, std::string> read_tool(ToolPick pick, ApiRequest& req) {
  if (!pick) return tl::make_unexpected(pick.error());
  req.tool = std::move(*pick);
  return {};
}

tl::expected<void, std::string> read_chat(const Json& body, ApiRequest& req) {
  auto messages = body.find("messages");
  if (messages == body.end() || !messages->is_array()) {
    return tl::make_unexpected("'messages' is required and must be an array");
  }
  for (const Json& m : *messages) {
    if (!m.is_object()) return tl::make_unexpected("each message must be an object");
    auto content = m.find("content");
    if (content != m.end()) append_content(req.prompt_text, *content);
  }
  req.prompt_tokens = count_words(req.prompt_text);
  if (auto ok = read_stop(body, "stop", true, req); !ok) return ok;
  return read_tool(pick_openai_tool(body), req);
}

// Adds one prompt or embeddings input: a string, or an array of token ids. False when `item` is
// neither.
bool add_input(const Json& item, ApiRequest& req) {
  std::string text;
  size_t tokens = 0;
  if (item.is_string()) {
    text = item.get<std::string>();
    tokens = count_words(text);
  } else if (is_token_array(item)) {
    text = render_token_ids(item);
    tokens = item.size();
  } else {
    return false;
  }
  append_text(req.prompt_text, text);
  req.prompt_tokens += tokens;
  req.inputs.push_back(std::move(text));
  req.input_tokens.push_back(tokens);
  return true;
}

// A string, an array of token ids, or a non-empty list of those (a batch).
bool add_inputs(const Json& value, ApiRequest& req) {
  if (value.is_string() || is_token_array(value)) return add_input(value, req);
  if (!value.is_array() || value.empty()) return false;
  for (const Json& item : value) {
    if (!add_input(item, req)) return false;
  }
  return true;
}

tl::expected<void, std::string> read_completions(const Json& body, ApiRequest& req) {
  auto prompt = body.find("prompt");
  if (prompt == body.end()) return tl::make_unexpected("'prompt' is required");
  if (!add_inputs(*prompt, req)) {
    return tl::make_unexpected(
        "'prompt' must be a string, an array of token ids, or a list of those");
  }
  if (is_token_array(*prompt)) {
    for (const Json& id : *prompt)
      req.prompt_ids.push_back(static_cast<uint32_t>(id.get<int64_t>()));
  }
  return read_stop(body, "stop", true, req);
}

// `key` as an integer in [1, max]; nullopt when absent or null.
tl::expected<std::optional<size_t>, std::string> read_count(const Json& body, const char* key,
                                                            size_t max) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return std::optional<size_t>();
  if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<uint64_t>() > max) {
    return tl::make_unexpected("'" + std::string(key) + "' must be an integer from 1 to " +
                               std::to_string(max));
  }
  return std::optional<size_t>(it->get<uint64_t>());
}

tl::expected<void, std::string> read_embeddings(const Json& body, ApiRequest& req) {
  auto input = body.find("input");
  if (input == body.end()) return tl::make_unexpected("'input' is required");
  if (!add_inputs(*input, req)) {
    return tl::make_unexpected(
        "'input' must be a string, an array of token ids, or a list of those");
  }
  auto dimensions = read_count(body, "dimensions", kMaxEmbeddingDims);
  if (!dimensions) return tl::make_unexpected(dimensions.error());
  req.dimensions = *dimensions;
  auto format = body.find("encoding_format");
  if (format == body.end() || format->is_null() || *format == "float") return {};
  if (*format != "base64") {
    return tl::make_unexpected("'encoding_format' must be \"float\" or \"base64\"");
  }
  req.encoding = EmbeddingEncoding::kBase64;
  return {};
}

tl::expected<void, std::string> read_responses(const Json& body, ApiRequest& req) {
  auto instructions = body.find("instructions");
  if (instructions != body.end() && instructions->is_string()) {
    append_text(req.prompt_text, instructions->get_ref<const std::string&>());
  }
  auto input = body.find("input");
  if (input == body.end()) return tl::make_unexpected("'input' is required");
  if (input->is_string()) {
    append_text(req.prompt_text, input->get_ref<const std::string&>());
  } else if (input->is_array()) {
    for (const Json& item : *input) {
      if (!item.is_object()) continue;
      auto content = item.find("content");
      if (content != item.end()) append_content(req.prompt_text, *content);
    }
  } else {
    return tl::make_unexpected("'input' must be a string or an array of input items");
  }
  req.prompt_tokens = count_words(req.prompt_text);
  return {};
}

tl::expected<void, std::string> read_messages(const Json& body, ApiRequest& req) {
  auto system = body.find("system");
  if (system != body.end()) append_content(req.prompt_text, *system);
  auto messages = body.find("messages");
  if (messages == body.end() || !messages->is_array()) {
    return tl::make_unexpected("'messages' is required and must be an array");
  }
  for (const Json& m : *messages) {
    if (!m.is_object()) return tl::make_unexpected("each message must be an object");
    auto content = m.find("content");
    if (content != m.end()) append_content(req.prompt_text, *content);
  }
  req.prompt_tokens = count_words(req.prompt_text);
  if (auto ok = read_stop(body, "stop_sequences", false, req); !ok) return ok;
  return read_tool(pick_anthropic_tool(body), req);
}

tl::expected<void, std::string> read_n(const Json& body, ApiRequest& req) {
  auto n = read_count(body, "n", kMaxChoices);
  if (!n) return tl::make_unexpected(n.error());
  req.n = n->value_or(1);
  return {};
}

}  // namespace

bool is_gemini(ApiKind api) {
  return api == ApiKind::kGemini || api == ApiKind::kGeminiEmbed ||
         api == ApiKind::kGeminiBatchEmbed;
}

bool is_embeddings(ApiKind api) {
  return api == ApiKind::kEmbeddings || api == ApiKind::kGeminiEmbed ||
         api == ApiKind::kGeminiBatchEmbed;
}

std::optional<ApiKind> api_for_path(std::string_view path) {
  if (path == "/v1/chat/completions") return ApiKind::kChat;
  if (path == "/v1/completions") return ApiKind::kCompletions;
  if (path == "/v1/embeddings") return ApiKind::kEmbeddings;
  if (path == "/v1/responses") return ApiKind::kResponses;
  if (path == "/v1/messages") return ApiKind::kMessages;
  if (auto gemini = parse_gemini_path(path)) return gemini->api;
  return std::nullopt;
}

tl::expected<ApiRequest, std::string> read_api_request(ApiKind api, const Json& body) {
  if (!body.is_object()) return tl::make_unexpected("the request body must be a JSON object");
  ApiRequest req;
  if (auto model = body.find("model"); model != body.end()) {
    if (!model->is_string()) return tl::make_unexpected("'model' must be a string");
    req.model = model->get<std::string>();
  }
  if (auto stream = body.find("stream"); stream != body.end() && !stream->is_null()) {
    if (!stream->is_boolean()) return tl::make_unexpected("'stream' must be a boolean");
    req.stream = stream->get<bool>();
  }
  if (auto opts = body.find("stream_options"); opts != body.end() && opts->is_object()) {
    auto usage = opts->find("include_usage");
    req.include_usage = usage != opts->end() && usage->is_boolean() && usage->get<bool>();
  }

  tl::expected<void, std::string> shape;
  tl::expected<std::optional<size_t>, std::string> max_tokens;
  switch (api) {
    case ApiKind::kChat:
      shape = read_chat(body, req);
      max_tokens = read_max_tokens(body, {"max_completion_tokens", "max_tokens"});
      if (shape) shape = read_n(body, req);
      break;
    case ApiKind::kCompletions:
      shape = read_completions(body, req);
      max_tokens = read_max_tokens(body, {"max_tokens"});
      if (shape) shape = read_n(body, req);
      break;
    case ApiKind::kEmbeddings:
      shape = read_embeddings(body, req);
      req.stream = false;  // embeddings never stream
      break;
    case ApiKind::kResponses:
      shape = read_responses(body, req);
      max_tokens = read_max_tokens(body, {"max_output_tokens"});
      break;
    case ApiKind::kMessages:
      shape = read_messages(body, req);
      max_tokens = read_max_tokens(body, {"max_tokens"});
      break;
    case ApiKind::kGemini:
    case ApiKind::kGeminiEmbed:
    case ApiKind::kGeminiBatchEmbed:
      req.stream = false;  // the path says whether to stream
      shape = read_gemini_request(api, body, req);
      break;
  }
  if (!shape) return tl::make_unexpected(shape.error());
  if (!max_tokens) return tl::make_unexpected(max_tokens.error());
  if (*max_tokens) req.max_tokens = *max_tokens;
  if (api == ApiKind::kChat || api == ApiKind::kCompletions) {
    auto kv = read_kv_transfer_params(body);
    if (!kv) return tl::make_unexpected(kv.error());
    req.kv_transfer = std::move(*kv);
  }
  return req;
}

}  // namespace rolter::sim
