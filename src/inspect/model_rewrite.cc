#include "inspect/model_rewrite.h"

#include <simdjson.h>

#include "common/json_escape.h"

namespace rolter {

void ModelRewrite::append_to(std::string& out) const {
  out.reserve(out.size() + size());
  out.append(prefix);
  out.append(model_token);
  out.append(suffix);
}

tl::expected<ModelRewrite, InspectError> rewrite_model(std::string_view body,
                                                       const RequestFacts& facts,
                                                       std::string_view new_model) {
  const size_t offset = facts.model_token_offset;
  const size_t length = facts.model_token_length;
  // Checking the token bytes (not the whole body) keeps this O(model) while catching facts of
  // another request.
  if (length < 2 || offset > body.size() || length > body.size() - offset ||
      body.substr(offset, length) != facts.model_token) {
    return tl::unexpected(InspectError{InspectErrorCode::kBodyMismatch,
                                       "model token position does not match the request body"});
  }
  // No escape turns invalid UTF-8 into valid JSON, so refuse rather than forward a broken body.
  if (!simdjson::validate_utf8(new_model.data(), new_model.size())) {
    return tl::unexpected(
        InspectError{InspectErrorCode::kInvalidUtf8, "upstream model name is not valid UTF-8"});
  }
  ModelRewrite pieces;
  pieces.prefix = body.substr(0, offset);
  append_json_string(pieces.model_token, new_model);
  pieces.suffix = body.substr(offset + length);
  return pieces;
}

}  // namespace rolter
