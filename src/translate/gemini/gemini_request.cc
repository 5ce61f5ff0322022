// A chat-completions request as a Gemini request: refuses what Gemini cannot do, then runs the
// steps of gemini_request_parts.h. Fields that change nothing Gemini would produce (user, store,
// metadata, parallel_tool_calls, service_tier, stream_options, prediction) are not sent.
#include "translate/gemini/gemini_request.h"

#include "translate/gemini/gemini_request_parts.h"

namespace rolter::gemini {
namespace {

enum class Refuse { kPresent, kTrue, kNonEmpty, kNotTextOnly };

struct Untranslatable {
  const char* field;
  Refuse when;
  const char* why;
};

// Fields that would change the answer and that Gemini's API has no equivalent for.
constexpr Untranslatable kUntranslatable[] = {
    {"logprobs", Refuse::kTrue, "logprobs cannot be translated to Gemini"},
    {"top_logprobs", Refuse::kPresent, "top_logprobs cannot be translated to Gemini"},
    {"logit_bias", Refuse::kNonEmpty, "logit_bias cannot be translated to Gemini"},
    {"audio", Refuse::kPresent, "audio output cannot be translated to Gemini"},
    {"modalities", Refuse::kNotTextOnly,
     "modalities other than text cannot be translated to Gemini"},
    {"functions", Refuse::kPresent, "legacy functions cannot be translated to Gemini; use tools"},
    {"function_call", Refuse::kPresent,
     "legacy function_call cannot be translated to Gemini; use tool_choice"},
    {"web_search_options", Refuse::kPresent, "web_search_options cannot be translated to Gemini"},
};

bool refused(const Json& value, Refuse when) {
  switch (when) {
    case Refuse::kPresent:
      return true;
    case Refuse::kTrue:
      return value != false;
    case Refuse::kNonEmpty:
      return !(value.is_object() && value.empty());
    case Refuse::kNotTextOnly:
      if (!value.is_array()) return true;
      for (const auto& modality : value) {
        if (modality != "text") return true;
      }
      return false;
  }
  return true;
}

Status check_translatable(const Json& request) {
  for (const auto& field : kUntranslatable) {
    const Json* value = member(request, field.field);
    if (value != nullptr && refused(*value, field.when)) {
      return tl::unexpected(bad_request(field.field, field.why));
    }
  }
  return {};
}

}  // namespace

tl::expected<TranslatedRequest, TranslateError> chat_request(std::string_view client_body,
                                                             const TranslateOptions& options) {
  const auto request = parse_json(client_body);
  if (!request || !request->is_object()) {
    return tl::unexpected(bad_request("", "the request body is not a JSON object"));
  }
  const Json* messages = array_member(*request, "messages");
  if (messages == nullptr || messages->empty()) {
    return tl::unexpected(bad_request("messages", "messages must be a non-empty array"));
  }
  const std::string model = target_model(*request, options);
  if (model.empty()) return tl::unexpected(bad_request("model", "no model to send to Gemini"));
  const Json* stream = member(*request, "stream");
  if (stream != nullptr && !stream->is_boolean()) {
    return tl::unexpected(bad_request("stream", "stream must be a boolean"));
  }
  if (auto ok = check_translatable(*request); !ok) return tl::unexpected(ok.error());

  Json body = Json::object();
  for (auto step : {add_generation_config, add_tools}) {
    if (auto ok = step(*request, body); !ok) return tl::unexpected(ok.error());
  }
  if (auto ok = add_contents(*messages, body); !ok) return tl::unexpected(ok.error());

  TranslatedRequest out;
  out.stream = stream != nullptr && *stream == true;
  out.path = model_path(model, out.stream ? "streamGenerateContent?alt=sse" : "generateContent");
  out.body = dump_json(body);
  return out;
}

}  // namespace rolter::gemini
