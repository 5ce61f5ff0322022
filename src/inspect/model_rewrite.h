// Model rewrite: forward a request body with only its `model` replaced (SPEC §2: nothing else in
// the body is re-serialised).
//
// The inspector recorded where the raw `model` token sits; the forwarded body is
// prefix + model_token + suffix, written with a gather write, so the (possibly large) body is never
// copied.
//
//   auto pieces = rewrite_model(body, facts, target.upstream_model);
//   if (!pieces) return internal_error(pieces.error());
//   write({pieces->prefix, pieces->model_token, pieces->suffix});
//
// Thread-safety: pure functions; the returned views point into `body`.
#pragma once

#include <string>
#include <string_view>
#include <tl/expected.hpp>

#include "inspect/inspect_error.h"
#include "inspect/request_facts.h"

namespace rolter {

struct ModelRewrite {
  std::string_view prefix;  // body bytes before the old model token
  // The new model as a JSON string literal, quotes included: '"' and '\\' escaped, control
  // characters as \b \f \n \r \t or \u00XX, every other byte (UTF-8 included) copied unchanged.
  std::string model_token;
  std::string_view suffix;  // body bytes after the old model token

  size_t size() const { return prefix.size() + model_token.size() + suffix.size(); }
  // Appends the three pieces to `out` (for callers that need one contiguous body).
  void append_to(std::string& out) const;
};

// Splits `body` around the model token recorded in `facts` and encodes `new_model` as a JSON
// string. REQUIRES: `facts` came from inspecting exactly `body`; a mismatch is detected
// (body_mismatch) rather than trusted. `new_model` must be valid UTF-8 (invalid_utf8 otherwise),
// since no escape can make invalid UTF-8 into valid JSON.
tl::expected<ModelRewrite, InspectError> rewrite_model(std::string_view body,
                                                       const RequestFacts& facts,
                                                       std::string_view new_model);

}  // namespace rolter
