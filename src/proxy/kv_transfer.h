// The bodies of vLLM's KV-transfer handshake (SPEC §18), as plain functions of text.
//
// Step 1 goes to a prefill worker: the client's body made a one-token, unstreamed request that
// asks the engine to keep the prompt's KV blocks for a remote decode. Its answer carries
// `kv_transfer_params` (the engine id, block ids, host and port a decode worker pulls them from).
// Step 2 goes to a decode worker: the client's body as sent, with that object added byte for
// byte, so whatever a connector puts there (NixlConnector, LMCache, P2P) reaches the decode
// engine unchanged.
//
//   auto first = prefill_request_body(body, "llama");        // nullopt: not a JSON object
//   auto params = kv_transfer_params_of(answer.body());       // error: no usable object
//   std::string second = with_kv_transfer_params(body, *params);
//
// Thread-safety: pure functions.
#pragma once

#include <tl/expected.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace rolter {

// The step-1 body: `body` (a JSON object) with `model` set to `model`, stream = false,
// max_tokens = 1 (and max_completion_tokens = 1 when the client set it), no stream_options, and
// kv_transfer_params = {"do_remote_decode": true, "do_remote_prefill": false, "remote_engine_id":
// null, "remote_block_ids": null, "remote_host": null, "remote_port": null}. nullopt when `body`
// is not a JSON object.
std::optional<std::string> prefill_request_body(std::string_view body, std::string_view model);

// The `kv_transfer_params` object of a step-1 answer, exactly as the engine wrote it; an error
// (for the log) when the answer is not a JSON object or has no such object.
tl::expected<std::string_view, std::string> kv_transfer_params_of(std::string_view answer);

// Whether a client's body already carries kv_transfer_params: the client drives the connector
// itself, and the gateway does not split its request.
bool carries_kv_transfer_params(std::string_view body);

// `body` (a JSON object) with `"kv_transfer_params":<params>` added as its last member.
std::string with_kv_transfer_params(std::string_view body, std::string_view params);

}  // namespace rolter
