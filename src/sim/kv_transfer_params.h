// kv_transfer_params: the field of a chat or completions body through which a prefill/decode
// proxy drives vLLM's KV connectors (NixlConnector), SPEC section 18.
//
// Step 1 goes to a prefill engine with {"do_remote_decode": true, "remote_*": null}; it answers
// with {"do_remote_prefill": true, "remote_engine_id", "remote_block_ids", "remote_host",
// "remote_port", ...}, and step 2 carries that object to a decode engine, which pulls the blocks.
//
// Reading is split in two, as the answers differ: a field that is not an object, or flags that
// are not booleans (or both true), make the request malformed (400); remote_* fields that cannot
// name blocks make a step 2 unusable, which a decode engine reports as a failed KV load (503,
// see kv_transfer_registry.h), so they are kept as `remote_error` rather than failing the read.
//
// Thread-safety: pure functions over values.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <tl/expected.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rolter::sim {

// What an engine does in a disaggregated fleet (vLLM's kv_role: kv_producer, kv_consumer,
// kv_both). Every role serves plain requests.
enum class EngineRole { kBoth, kPrefill, kDecode };
const char* role_name(EngineRole role);

struct KvTransferParams {
  bool do_remote_decode = false;   // step 1: prefill here, hold the blocks for a pull
  bool do_remote_prefill = false;  // step 2: pull the blocks named below, then decode
  // Step 2: where the blocks are. Meaningful only when remote_error is empty.
  std::string remote_engine_id;
  std::vector<uint32_t> remote_block_ids;
  std::string remote_host;
  uint16_t remote_port = 0;
  // Step 2: why the remote_* fields cannot name blocks; empty when they can.
  std::string remote_error;
};

// Reads body["kv_transfer_params"]: nullopt when absent or null. REQUIRES: body is an object.
tl::expected<std::optional<KvTransferParams>, std::string> read_kv_transfer_params(
    const nlohmann::json& body);

}  // namespace rolter::sim
