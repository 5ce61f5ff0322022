// An attempt whose target speaks another API than the client (SPEC §16): which translator it
// needs, the target's request, and the answer read from the target and written to the client in
// the client's API.
//
// Translation happens after the pick, per attempt: the strategies read the client's conversation,
// and a retry on a target of another kind gets a body made for that kind. The client's request is
// translated whole (it is already in memory). The answer is translated as it arrives: an SSE
// stream event by event through a StreamTranslator (translate/translator.h), so the client sees
// each token as soon as the target sends it; a whole answer or an error body is read whole (at
// most kMaxTranslatedBody) and translated at once. A stream that breaks ends with the client API's
// stream error event, never silently.
//
// Thread-safety: runs on the worker thread that owns the connection and the client stream.
#pragma once

#include <tl/expected.hpp>

#include <string>
#include <utility>
#include <vector>

#include "inspect/request_facts.h"
#include "proxy/client_response.h"
#include "proxy/exchange.h"
#include "snapshot/snapshot.h"
#include "translate/translator.h"

namespace rolter {

// The largest whole answer (or error body) read to be translated.
inline constexpr size_t kMaxTranslatedBody = 32 << 20;

// What an attempt on a target of `target` kind needs for a client that spoke `client`.
struct TranslationPlan {
  const Translator* translator = nullptr;  // null: the target speaks the client's API
  // The target cannot serve this API at all (a Messages request to Gemini, embeddings to
  // Anthropic): the answer is a 400 naming both.
  bool unsupported = false;
};
TranslationPlan plan_translation(ApiKind client, ProviderKind target);

// The target's request for the client's body, and the fixed fields it needs beside the
// provider's own (anthropic-version for Anthropic).
struct TranslatedAttempt {
  TranslatedRequest request;
  std::vector<std::pair<std::string, std::string>> fixed_fields;
};
tl::expected<TranslatedAttempt, TranslateError> translate_attempt(const AttemptParams& p,
                                                                  const Translator& translator);

// The options every step of one attempt's translation uses.
TranslateOptions translate_options(const AttemptParams& p);

// Reads the target's answer (head already read into `parser`) and writes it to the client in the
// client's API. Fills report like the plain relay: first token, usage, broken, client_usable,
// reusable.
template <typename Stream>
Task<void> relay_translated(Stream& upstream, UpstreamConnection& connection,
                            TimedStream& client, ResponseParser& parser,
                            const AttemptParams& p, const Translator& translator,
                            AttemptReport& report);

// An error answer (400 or 413) read whole before anything reaches the client, for a route that
// falls back on `context_length` or `content_filter` (SPEC §16): when its body says the prompt is
// too long, or the content was refused, the attempt fails (report.outcome kFailed,
// report.context_length or report.content_filter) and nothing is written; otherwise
// it is written to the client as the plain relay would, translated when the target speaks another
// API.
template <typename Stream>
Task<void> relay_error_or_fall_back(Stream& upstream, UpstreamConnection& connection,
                                    TimedStream& client, ResponseParser& parser,
                                    const AttemptParams& p, AttemptReport& report);

extern template Task<void> relay_error_or_fall_back(UpstreamConnection::Plain&,
                                                    UpstreamConnection&, TimedStream&,
                                                    ResponseParser&, const AttemptParams&,
                                                    AttemptReport&);
extern template Task<void> relay_error_or_fall_back(UpstreamConnection::Tls&, UpstreamConnection&,
                                                    TimedStream&, ResponseParser&,
                                                    const AttemptParams&, AttemptReport&);

extern template Task<void> relay_translated(UpstreamConnection::Plain&, UpstreamConnection&,
                                            TimedStream&, ResponseParser&,
                                            const AttemptParams&, const Translator&,
                                            AttemptReport&);
extern template Task<void> relay_translated(UpstreamConnection::Tls&, UpstreamConnection&,
                                            TimedStream&, ResponseParser&,
                                            const AttemptParams&, const Translator&,
                                            AttemptReport&);

}  // namespace rolter
