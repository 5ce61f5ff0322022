#include "translate/gemini/gemini_embeddings.h"

#include "translate/gemini/gemini_json.h"

namespace rolter::gemini {
namespace {

tl::expected<Json, TranslateError> input_texts(const Json& request) {
  const Json* input = member(request, "input");
  if (input == nullptr) return tl::unexpected(bad_request("input", "input is required"));
  if (input->is_string()) return Json::array({*input});
  if (!input->is_array() || input->empty()) {
    return tl::unexpected(
        bad_request("input", "input must be a string or a non-empty array of strings"));
  }
  for (const auto& item : *input) {
    if (!item.is_string()) {
      // Token ids only mean something to OpenAI's own tokenizer.
      return tl::unexpected(
          bad_request("input", "token-array input cannot be translated to Gemini; send text"));
    }
  }
  return *input;
}

}  // namespace

tl::expected<TranslatedRequest, TranslateError> embeddings_request(
    std::string_view client_body, const TranslateOptions& options) {
  const auto request = parse_json(client_body);
  if (!request || !request->is_object()) {
    return tl::unexpected(bad_request("", "the request body is not a JSON object"));
  }
  const std::string model = target_model(*request, options);
  if (model.empty()) return tl::unexpected(bad_request("model", "no model to send to Gemini"));
  if (const Json* format = member(*request, "encoding_format"); format && *format != "float") {
    return tl::unexpected(bad_request(
        "encoding_format", "encoding_format other than float cannot be translated to Gemini"));
  }
  const Json* dimensions = member(*request, "dimensions");
  if (dimensions != nullptr && !dimensions->is_number_unsigned()) {
    return tl::unexpected(bad_request("dimensions", "dimensions must be a positive integer"));
  }
  auto texts = input_texts(*request);
  if (!texts) return tl::unexpected(texts.error());

  const std::string resource = model.starts_with("models/") ? model : "models/" + model;
  Json requests = Json::array();
  for (const auto& text : *texts) {
    Json one = {{"model", resource}, {"content", {{"parts", Json::array({{{"text", text}}})}}}};
    if (dimensions != nullptr) one["outputDimensionality"] = *dimensions;
    requests.push_back(std::move(one));
  }
  TranslatedRequest out;
  out.path = model_path(model, "batchEmbedContents");
  out.body = dump_json(Json{{"requests", std::move(requests)}});
  return out;
}

tl::expected<std::string, TranslateError> embeddings_response(std::string_view upstream_body,
                                                              const TranslateOptions& options) {
  const auto response = parse_json(upstream_body);
  const Json* embeddings = response ? array_member(*response, "embeddings") : nullptr;
  if (embeddings == nullptr)
    return tl::unexpected(bad_upstream("Gemini's answer has no embeddings"));
  Json data = Json::array();
  for (size_t i = 0; i < embeddings->size(); ++i) {
    const Json* values = array_member((*embeddings)[i], "values");
    if (values == nullptr) return tl::unexpected(bad_upstream("Gemini's embedding has no values"));
    for (const auto& value : *values) {
      if (!value.is_number())
        return tl::unexpected(bad_upstream("Gemini's embedding holds a non-number"));
    }
    data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", *values}});
  }
  Json out = {{"object", "list"},
              {"data", std::move(data)},
              {"model", options.model.empty() ? Json("") : Json(options.model)},
              {"usage", {{"prompt_tokens", 0}, {"total_tokens", 0}}}};
  return dump_json(out);
}

}  // namespace rolter::gemini
