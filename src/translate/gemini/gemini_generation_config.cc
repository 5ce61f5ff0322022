// Sampling and output fields of a chat request as Gemini's generationConfig.
//
//   temperature, top_p → topP, top_k → topK (a common extension), presence_penalty →
//   presencePenalty, frequency_penalty → frequencyPenalty, seed, n → candidateCount,
//   max_completion_tokens (else max_tokens) → maxOutputTokens, stop → stopSequences,
//   response_format json_object → responseMimeType "application/json",
//   json_schema → that and responseSchema (gemini_schema), text → nothing.
// A field of the wrong type is a 400 naming it, not a value passed on for Gemini to refuse.
#include "translate/gemini/gemini_request_parts.h"

namespace rolter::gemini {
namespace {

enum class Kind { kNumber, kInteger, kCount };

struct Mapping {
  const char* openai;
  const char* gemini;
  Kind kind;
};

// max_tokens comes before max_completion_tokens so that the newer name wins when both are set.
constexpr Mapping kMappings[] = {
    {"temperature", "temperature", Kind::kNumber},
    {"top_p", "topP", Kind::kNumber},
    {"top_k", "topK", Kind::kCount},
    {"presence_penalty", "presencePenalty", Kind::kNumber},
    {"frequency_penalty", "frequencyPenalty", Kind::kNumber},
    {"seed", "seed", Kind::kInteger},
    {"n", "candidateCount", Kind::kCount},
    {"max_tokens", "maxOutputTokens", Kind::kCount},
    {"max_completion_tokens", "maxOutputTokens", Kind::kCount},
};

bool fits(const Json& value, Kind kind) {
  switch (kind) {
    case Kind::kNumber:
      return value.is_number();
    case Kind::kInteger:
      return value.is_number_integer();
    case Kind::kCount:
      return value.is_number_unsigned();
  }
  return false;
}

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::kNumber:
      return "a number";
    case Kind::kInteger:
      return "an integer";
    case Kind::kCount:
      return "a non-negative integer";
  }
  return "";
}

Status add_stop(const Json& request, Json& config) {
  const Json* stop = member(request, "stop");
  if (stop == nullptr) return {};
  if (stop->is_string()) {
    if (!stop->get_ref<const std::string&>().empty())
      config["stopSequences"] = Json::array({*stop});
    return {};
  }
  if (!stop->is_array())
    return tl::unexpected(bad_request("stop", "stop must be a string or an array of strings"));
  for (const auto& sequence : *stop) {
    if (!sequence.is_string())
      return tl::unexpected(bad_request("stop", "stop must be a string or an array of strings"));
  }
  if (!stop->empty()) config["stopSequences"] = *stop;
  return {};
}

Status add_response_format(const Json& request, Json& config) {
  const Json* format = member(request, "response_format");
  if (format == nullptr) return {};
  const std::string* type = string_member(*format, "type");
  if (type == nullptr)
    return tl::unexpected(
        bad_request("response_format.type", "response_format.type must be a string"));
  if (*type == "text") return {};
  if (*type == "json_object") {
    config["responseMimeType"] = "application/json";
    return {};
  }
  if (*type != "json_schema") {
    return tl::unexpected(
        bad_request("response_format.type",
                    "response_format type \"" + *type + "\" cannot be translated to Gemini"));
  }
  config["responseMimeType"] = "application/json";
  const Json* json_schema = object_member(*format, "json_schema");
  const Json* schema = json_schema ? member(*json_schema, "schema") : nullptr;
  if (schema == nullptr) return {};
  auto converted = gemini_schema(*schema, "response_format.json_schema.schema");
  if (!converted) return tl::unexpected(converted.error());
  config["responseSchema"] = std::move(*converted);
  return {};
}

}  // namespace

Status add_generation_config(const Json& request, Json& body) {
  Json config = Json::object();
  for (const auto& mapping : kMappings) {
    const Json* value = member(request, mapping.openai);
    if (value == nullptr) continue;
    if (!fits(*value, mapping.kind)) {
      return tl::unexpected(bad_request(
          mapping.openai, std::string(mapping.openai) + " must be " + kind_name(mapping.kind)));
    }
    config[mapping.gemini] = *value;
  }
  if (auto ok = add_stop(request, config); !ok) return ok;
  if (auto ok = add_response_format(request, config); !ok) return ok;
  if (!config.empty()) body["generationConfig"] = std::move(config);
  return {};
}

}  // namespace rolter::gemini
