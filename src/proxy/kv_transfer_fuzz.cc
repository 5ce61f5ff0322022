// libFuzzer target for the KV-transfer handshake's readers: a prefill engine's answer
// (kv_transfer_params_of) and a client's body (prefill_request_body, carries_kv_transfer_params).
//
// Beyond "never crash", it checks what step 2 relies on: the params found are a JSON object's text
// taken from inside the answer, and adding them to an object body keeps it one JSON object.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "proxy/kv_transfer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  (void)rolter::carries_kv_transfer_params(input);
  (void)rolter::prefill_request_body(input, "m");
  const auto params = rolter::kv_transfer_params_of(input);
  if (!params) return 0;
  if (params->empty() || params->front() != '{' || params->back() != '}') std::abort();
  if (params->data() < input.data() || params->data() + params->size() > input.data() + size) {
    std::abort();
  }
  const std::string body = rolter::with_kv_transfer_params(R"({"model":"m"})", *params);
  const auto doc = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("kv_transfer_params")) std::abort();
  return 0;
}
