#include "inspect/model_rewrite.h"

#include <simdjson.h>

namespace rolter {
namespace {

// REQUIRES: `text` is valid UTF-8 (multi-byte sequences are copied as they are).
void append_json_string_literal(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.reserve(out.size() + text.size() + 2);
  out.push_back('"');
  size_t run = 0;  // start of the bytes not yet copied; copied in bulk up to the next escape
  for (size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0x20 && byte != '"' && byte != '\\') continue;
    out.append(text.data() + run, i - run);
    run = i + 1;
    switch (byte) {
      case '"':
        out.append("\\\"");
        break;
      case '\\':
        out.append("\\\\");
        break;
      case '\b':
        out.append("\\b");
        break;
      case '\f':
        out.append("\\f");
        break;
      case '\n':
        out.append("\\n");
        break;
      case '\r':
        out.append("\\r");
        break;
      case '\t':
        out.append("\\t");
        break;
      default:
        // RFC 8259 §7: every other control character must be written as \u00XX.
        out.append("\\u00");
        out.push_back(kHex[byte >> 4]);
        out.push_back(kHex[byte & 0xf]);
    }
  }
  out.append(text.data() + run, text.size() - run);
  out.push_back('"');
}

}  // namespace

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
    return tl::unexpected(InspectError{InspectErrorCode::body_mismatch,
                                       "model token position does not match the request body"});
  }
  // No escape turns invalid UTF-8 into valid JSON, so refuse rather than forward a broken body.
  if (!simdjson::validate_utf8(new_model.data(), new_model.size())) {
    return tl::unexpected(
        InspectError{InspectErrorCode::invalid_utf8, "upstream model name is not valid UTF-8"});
  }
  ModelRewrite pieces;
  pieces.prefix = body.substr(0, offset);
  append_json_string_literal(pieces.model_token, new_model);
  pieces.suffix = body.substr(offset + length);
  return pieces;
}

}  // namespace rolter
