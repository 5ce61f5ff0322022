// Internal: the steps that build a Gemini generateContent body from a chat-completions request,
// one per part of the body. gemini_request.cc runs them in order; each writes its own keys of
// `body` and returns a 400 naming the client's field it could not translate.
//
// Thread-safety: free functions over the caller's values.
#pragma once

#include <tl/expected.hpp>

#include <string>

#include "translate/gemini/gemini_json.h"

namespace rolter::gemini {

using Status = tl::expected<void, TranslateError>;

// messages → contents (user / model turns, same-role neighbours merged) and systemInstruction.
Status add_contents(const Json& messages, Json& body);

// One element of a user or assistant message's content array (text, image_url, input_audio,
// file) as a Gemini part, or null for an empty text (Gemini refuses empty text parts). `where`
// is its JSON path, for errors.
tl::expected<Json, TranslateError> content_part(const Json& part, const std::string& where);

// All the text of a message's content (a string, or an array of text parts), for system and tool
// messages, which carry text only.
tl::expected<std::string, TranslateError> content_text(const Json& content,
                                                       const std::string& where);

// tools → tools[0].functionDeclarations, tool_choice → toolConfig.functionCallingConfig.
Status add_tools(const Json& request, Json& body);

// A JSON Schema as the OpenAPI subset Gemini accepts (see gemini_schema.cc for what is kept).
tl::expected<Json, TranslateError> gemini_schema(const Json& schema, const std::string& where);

// Sampling and output fields → generationConfig.
Status add_generation_config(const Json& request, Json& body);

}  // namespace rolter::gemini
