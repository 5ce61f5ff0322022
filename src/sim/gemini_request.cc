#include "sim/gemini_request.h"

#include <nlohmann/json.hpp>

#include "sim/text_generator.h"

namespace rolter::sim {
namespace {

using Json = nlohmann::json;
using Status = tl::expected<void, std::string>;

// Appends the text parts of a Content ({"parts":[{"text":...},...]}) to `out`, one line each.
// Other parts (inlineData, fileData, functionCall, functionResponse) add no words.
Status append_parts(const Json& content, std::string& out) {
  if (content.is_string()) {  // systemInstruction may be given as plain text
    if (!out.empty()) out += '\n';
    out += content.get<std::string>();
    return {};
  }
  if (!content.is_object()) return tl::make_unexpected("each content must be an object");
  auto parts = content.find("parts");
  if (parts == content.end()) return {};
  if (!parts->is_array()) return tl::make_unexpected("'parts' must be an array");
  for (const Json& part : *parts) {
    if (!part.is_object()) return tl::make_unexpected("each part must be an object");
    auto text = part.find("text");
    if (text == part.end() || !text->is_string() || text->get_ref<const std::string&>().empty()) {
      continue;
    }
    if (!out.empty()) out += '\n';
    out += text->get_ref<const std::string&>();
  }
  return {};
}

Status read_generation_config(const Json& body, ApiRequest& req) {
  auto config = body.find("generationConfig");
  if (config == body.end() || config->is_null()) return {};
  if (!config->is_object()) return tl::make_unexpected("'generationConfig' must be an object");
  if (auto max = config->find("maxOutputTokens"); max != config->end() && !max->is_null()) {
    if (!max->is_number_integer() || max->get<int64_t>() < 0) {
      return tl::make_unexpected("maxOutputTokens must be a non-negative integer");
    }
    req.max_tokens = max->get<uint64_t>();
  }
  if (auto stops = config->find("stopSequences"); stops != config->end() && !stops->is_null()) {
    if (!stops->is_array()) return tl::make_unexpected("stopSequences must be a list of strings");
    for (const Json& s : *stops) {
      if (!s.is_string()) return tl::make_unexpected("stopSequences must be a list of strings");
      req.stop.push_back(s.get<std::string>());
    }
  }
  if (auto n = config->find("candidateCount"); n != config->end() && !n->is_null()) {
    if (!n->is_number_integer() || n->get<int64_t>() < 1 ||
        n->get<uint64_t>() > kMaxGeminiCandidates) {
      return tl::make_unexpected("candidateCount must be an integer from 1 to 8");
    }
    req.n = n->get<size_t>();
  }
  return {};
}

Status read_generate(const Json& body, ApiRequest& req) {
  if (auto system = body.find("systemInstruction"); system != body.end() && !system->is_null()) {
    if (auto ok = append_parts(*system, req.prompt_text); !ok) return ok;
  }
  auto contents = body.find("contents");
  if (contents == body.end() || !contents->is_array() || contents->empty()) {
    return tl::make_unexpected("* GenerateContentRequest.contents: contents is not specified");
  }
  for (const Json& content : *contents) {
    if (auto ok = append_parts(content, req.prompt_text); !ok) return ok;
  }
  req.prompt_tokens = count_words(req.prompt_text);
  if (auto ok = read_generation_config(body, req); !ok) return ok;
  auto tool = pick_gemini_tool(body);
  if (!tool) return tl::make_unexpected(tool.error());
  req.tool = std::move(*tool);
  return {};
}

// One EmbedContentRequest: {"content":{...},"outputDimensionality":N}.
Status read_embed(const Json& request, ApiRequest& req) {
  if (!request.is_object()) return tl::make_unexpected("each request must be an object");
  auto content = request.find("content");
  if (content == request.end()) return tl::make_unexpected("'content' is required");
  std::string text;
  if (auto ok = append_parts(*content, text); !ok) return ok;
  if (auto dims = request.find("outputDimensionality"); dims != request.end() && !dims->is_null()) {
    if (!dims->is_number_integer() || dims->get<int64_t>() < 1 ||
        dims->get<uint64_t>() > kMaxEmbeddingDims) {
      return tl::make_unexpected("outputDimensionality must be a positive integer");
    }
    req.dimensions = dims->get<size_t>();
  }
  const size_t tokens = count_words(text);
  if (!req.prompt_text.empty()) req.prompt_text += '\n';
  req.prompt_text += text;
  req.prompt_tokens += tokens;
  req.inputs.push_back(std::move(text));
  req.input_tokens.push_back(tokens);
  return {};
}

Status read_batch_embed(const Json& body, ApiRequest& req) {
  auto requests = body.find("requests");
  if (requests == body.end() || !requests->is_array() || requests->empty()) {
    return tl::make_unexpected("'requests' is required and must be a non-empty array");
  }
  for (const Json& r : *requests) {
    if (auto ok = read_embed(r, req); !ok) return ok;
  }
  return {};
}

}  // namespace

std::optional<GeminiPath> parse_gemini_path(std::string_view path) {
  std::string_view rest;
  for (std::string_view prefix : {"/v1beta/models/", "/v1/models/"}) {
    if (path.substr(0, prefix.size()) == prefix) rest = path.substr(prefix.size());
  }
  const size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  GeminiPath out;
  out.model = std::string(rest.substr(0, colon));
  const std::string_view method = rest.substr(colon + 1);
  if (method == "generateContent") {
    out.api = ApiKind::kGemini;
  } else if (method == "streamGenerateContent") {
    out.api = ApiKind::kGemini;
    out.stream = true;
  } else if (method == "embedContent") {
    out.api = ApiKind::kGeminiEmbed;
  } else if (method == "batchEmbedContents") {
    out.api = ApiKind::kGeminiBatchEmbed;
  } else {
    return std::nullopt;
  }
  return out;
}

tl::expected<void, std::string> read_gemini_request(ApiKind api, const Json& body,
                                                    ApiRequest& req) {
  switch (api) {
    case ApiKind::kGemini:
      return read_generate(body, req);
    case ApiKind::kGeminiEmbed:
      return read_embed(body, req);
    case ApiKind::kGeminiBatchEmbed:
      return read_batch_embed(body, req);
    default:
      return tl::make_unexpected("not a Gemini method");
  }
}

}  // namespace rolter::sim
