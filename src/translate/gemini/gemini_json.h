// Internal helpers shared by the Gemini translators: reading untrusted JSON without exceptions,
// writing it back, and the pieces of a Gemini path. Not a public header: it pulls in nlohmann.
//
// Every accessor checks the type it reads, so a hostile or malformed body can only ever make a
// lookup come back empty; nothing here throws.
//
// Thread-safety: free functions over the caller's values.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "translate/translator.h"

namespace rolter::gemini {

using Json = nlohmann::json;

// Deeper JSON than this is refused before parsing: nlohmann's serializer recurses, and a body of
// nested brackets must not overflow the stack when a part of it is written back out. 256 levels
// is far beyond any real request, schema or function arguments.
inline constexpr size_t kMaxJsonDepth = 256;

// The parsed value, or nullopt when `text` is not JSON or nests deeper than kMaxJsonDepth.
std::optional<Json> parse_json(std::string_view text);

// Compact JSON; invalid UTF-8 in strings becomes U+FFFD instead of an exception.
std::string dump_json(const Json& value);

// The member `key` of `object` when `object` is an object holding it with a non-null value;
// nullptr otherwise.
const Json* member(const Json& object, const char* key);
// The member as a string / object / array, or nullptr when absent, null or of another type.
const std::string* string_member(const Json& object, const char* key);
const Json* object_member(const Json& object, const char* key);
const Json* array_member(const Json& object, const char* key);
// A non-negative integer member (JSON integers only), or nullopt.
std::optional<uint64_t> count_member(const Json& object, const char* key);

// A 400 for the client's request naming `param`.
TranslateError bad_request(std::string param, std::string message);
// A 502 for an upstream answer that makes no sense.
TranslateError bad_upstream(std::string message);

// "/v1beta/models/{model}:{method}", the model taken from `model` (a leading "models/" dropped)
// with every byte outside RFC 3986's unreserved set percent-encoded, so a model name can never
// change the path's shape.
std::string model_path(std::string_view model, std::string_view method);

// The model for a request: `options.model`, or else the client body's "model" string.
std::string target_model(const Json& client_body, const TranslateOptions& options);

}  // namespace rolter::gemini
