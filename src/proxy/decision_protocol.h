// The decision service's wire format (SPEC §7): the /v1/systemone request body built from a
// client's body, and the reply read into a DecisionVerdict (balance/decision_verdict.h).
//
// Request:
//   {"state": <client body>, "model": <decision model>,
//    "questions": {"model_selection": {"type": "choice", "instructions": <text>,
//                                      "criteria": {<target model>: <description or null>, ...}}}}
// Reply:
//   {"answers": {"model_selection": {"choice": "...", "probabilities": {<model>: p, ...},
//                                    "confidence": c}}}
//
// Apart from proxy/decision_client.h (the call) so that its fuzz target links no I/O.
//
// Thread-safety: pure functions; any thread.
#pragma once

#include <tl/expected.hpp>

#include <cstddef>
#include <string>
#include <string_view>

#include "balance/decision_verdict.h"
#include "snapshot/snapshot.h"

namespace rolter {

// SPEC §7: the client body sent as `state` is at most 64 KiB.
inline constexpr size_t kMaxDecisionStateBytes = 64 * 1024;
// A verdict names a handful of models; 1 MiB is far beyond any honest reply and bounds a bad one.
inline constexpr size_t kMaxDecisionReplyBytes = 1 << 20;

// The /v1/systemone body for `client_body`. `state` is the client body embedded as JSON when it is
// valid JSON of at most kMaxDecisionStateBytes. Otherwise `state` is a JSON string holding the
// body's first kMaxDecisionStateBytes bytes (cut on a UTF-8 character boundary; when the body is
// not valid UTF-8, every non-ASCII byte becomes '?'). Why a prefix as text: the request stays
// valid JSON and bounded without re-serialising the client's body, and the prefix carries what a
// model choice rests on first (the system prompt, the tools, the task) while a length past 64 KiB
// already says "long context". A decision engine that wants structure gets it for every body up
// to the bound.
std::string decision_request_body(std::string_view client_body,
                                  const PolicyRoute::Decision& decision);

// The verdict of a /v1/systemone reply. An error (no vote) when the body is not JSON, lacks
// answers.model_selection, its `choice` is not a string, its `confidence` is not a number in
// (0, 1], or `probabilities` is present but not an object of numbers in [0, 1]. A reply without
// `probabilities` (or with an empty object) gives its choice probability 1 and no other model
// any: the service named one model and nothing else. When a model is named twice, the first
// value counts.
tl::expected<DecisionVerdict, std::string> read_decision_reply(std::string_view body);

// Drops from `verdict` every probability for a model that is not one of the route's (the
// decision's criteria): the plugin scores only those, and a verdict kept for a session then
// costs memory in proportion to the route, not to what the service wrote. A choice that is not
// one of them is cleared.
void keep_route_models(DecisionVerdict& verdict, const PolicyRoute::Decision& decision);

}  // namespace rolter
