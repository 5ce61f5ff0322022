#include "sim/kv_transfer_params.h"

#include <nlohmann/json.hpp>

namespace rolter::sim {
namespace {

using Json = nlohmann::json;

// A flag: absent or null is false.
tl::expected<bool, std::string> read_flag(const Json& params, const char* name) {
  auto it = params.find(name);
  if (it == params.end() || it->is_null()) return false;
  if (!it->is_boolean()) {
    return tl::make_unexpected(std::string("'kv_transfer_params.") + name + "' must be a boolean");
  }
  return it->get<bool>();
}

// Fills the remote_* fields; the error says which one cannot be used.
std::string read_remote(const Json& params, KvTransferParams& out) {
  auto id = params.find("remote_engine_id");
  if (id == params.end() || !id->is_string() || id->get_ref<const std::string&>().empty()) {
    return "remote_engine_id must be a non-empty string";
  }
  out.remote_engine_id = id->get<std::string>();
  auto host = params.find("remote_host");
  if (host == params.end() || !host->is_string() || host->get_ref<const std::string&>().empty()) {
    return "remote_host must be a non-empty string";
  }
  out.remote_host = host->get<std::string>();
  auto port = params.find("remote_port");
  if (port == params.end() || !port->is_number_integer() || port->get<int64_t>() < 1 ||
      port->get<int64_t>() > 65535) {
    return "remote_port must be an integer port (1-65535)";
  }
  out.remote_port = static_cast<uint16_t>(port->get<int64_t>());
  auto blocks = params.find("remote_block_ids");
  if (blocks == params.end() || !blocks->is_array()) {
    return "remote_block_ids must be an array of block ids";
  }
  for (const Json& b : *blocks) {
    if (!b.is_number_integer() || b.get<int64_t>() < 0 || b.get<int64_t>() > UINT32_MAX) {
      return "remote_block_ids must hold non-negative integer block ids";
    }
    out.remote_block_ids.push_back(static_cast<uint32_t>(b.get<int64_t>()));
  }
  return {};
}

}  // namespace

const char* role_name(EngineRole role) {
  switch (role) {
    case EngineRole::kPrefill:
      return "prefill";
    case EngineRole::kDecode:
      return "decode";
    case EngineRole::kBoth:
      break;
  }
  return "both";
}

tl::expected<std::optional<KvTransferParams>, std::string> read_kv_transfer_params(
    const Json& body) {
  auto it = body.find("kv_transfer_params");
  if (it == body.end() || it->is_null()) return std::optional<KvTransferParams>{};
  if (!it->is_object()) return tl::make_unexpected("'kv_transfer_params' must be an object");
  KvTransferParams out;
  auto decode = read_flag(*it, "do_remote_decode");
  if (!decode) return tl::make_unexpected(decode.error());
  auto prefill = read_flag(*it, "do_remote_prefill");
  if (!prefill) return tl::make_unexpected(prefill.error());
  if (*decode && *prefill) {
    return tl::make_unexpected(
        "'kv_transfer_params' cannot set both do_remote_decode and do_remote_prefill");
  }
  out.do_remote_decode = *decode;
  out.do_remote_prefill = *prefill;
  if (out.do_remote_prefill) out.remote_error = read_remote(*it, out);
  return std::optional<KvTransferParams>(std::move(out));
}

}  // namespace rolter::sim
