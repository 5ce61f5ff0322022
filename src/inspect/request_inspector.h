// RequestInspector: reads what routing needs from a request body without building a DOM
// (SPEC §2): `model` (value and raw token position), `stream`, the conversation text bounded to
// 32 KiB, its length and digest, token ids, the session key and the body hash.
//
// The body is parsed with simdjson's on-demand API in two walks over one structural index: the
// first visits every value once, so malformed JSON anywhere in the body is a 400 here rather than a
// surprise at the upstream, and reads `model` and `stream`; the second, after a rewind, reads only
// the conversation fields of the endpoint in their logical order (e.g. Anthropic `system` before
// `messages`, whatever their order in the body). Nesting is bounded by kMaxDepth, so no body can
// exhaust the stack.
//
// Error classes:
//   - not JSON (syntax, invalid UTF-8, too deep, trailing content, an escape of an unpaired
//     UTF-16 surrogate) -> error, 400. Numbers beyond double/64-bit range are still JSON;
//   - JSON, but no usable `model` or a non-boolean `stream` -> error, 400;
//   - JSON with a model, but the conversation is not of the expected shape -> success with
//     conversation_read = false, an empty prompt and prompt_digest = body_hash; the upstream is
//     the authority on what else it accepts.
//
//   RequestInspector inspector;          // one per worker thread
//   RequestFacts facts;                  // reused across requests
//   InspectHeaders headers{.session_id = session_header, .vllm_token_ids = token_header};
//   auto ok = inspector.inspect(buf.data(), body_size, buf.capacity(), ApiKind::kChatCompletions,
//                               headers, facts);
//   if (!ok) return bad_request(ok.error().message);
//   RouteContext ctx = build_route_context(facts);
//
// Thread-safety: NOT thread-safe. An inspector owns a parser whose buffers are reused between
// calls; give each worker thread its own. Inspectors on different threads are independent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <tl/expected.hpp>
#include <vector>

#include "inspect/inspect_error.h"
#include "inspect/request_facts.h"

namespace rolter {

// The headers routing reads; the server passes them already extracted from the request.
struct InspectHeaders {
  // x-session-id; empty when absent.
  std::string_view session_id;
  // x-rolter-vllm-token-ids when present (an empty value is present, and an error).
  std::optional<std::string_view> vllm_token_ids;
};

class RequestInspector {
 public:
  // Bytes that must be readable (any content) after the body for the zero-copy path; equal to
  // simdjson::SIMDJSON_PADDING (checked in the .cc, so this header stays free of simdjson.h).
  static constexpr size_t kPadding = 64;
  // Deepest nesting accepted. Real requests nest < 10 levels (tool-call arguments are strings);
  // 128 leaves room for deeply structured tool schemas while bounding recursion.
  static constexpr size_t kMaxDepth = 128;

  RequestInspector();
  ~RequestInspector();
  RequestInspector(const RequestInspector&) = delete;
  RequestInspector& operator=(const RequestInspector&) = delete;

  // Inspects the body data[0, size) posted to a `kind` endpoint and fills `facts` (cleared first).
  // `capacity` is how many bytes from `data` are readable: when capacity >= size + kPadding the
  // body is parsed in place, otherwise it is first copied into a padded buffer the inspector keeps.
  // Offsets in `facts` are relative to `data` either way. On error `facts` is unspecified.
  tl::expected<void, InspectError> inspect(const char* data, size_t size, size_t capacity,
                                           ApiKind kind, const InspectHeaders& headers,
                                           RequestFacts& facts);

  // The safe path for a body with no known padding: always copies.
  tl::expected<void, InspectError> inspect(std::string_view body, ApiKind kind,
                                           const InspectHeaders& headers, RequestFacts& facts) {
    return inspect(body.data(), body.size(), body.size(), kind, headers, facts);
  }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rolter
