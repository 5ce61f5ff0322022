// libFuzzer target for the policy session key's body-field reader (first_string_field).
//
// The whole input is a request body; the reader looks for two fields, as a chain with two body
// sources does. Beyond "never crash", it checks that a key it finds is non-empty, and that a body
// an independent parser (nlohmann) reads as an object without repeated keys holds that key as
// that field's string.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

#include "proxy/policy_session_key.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  constexpr std::string_view kFields[] = {"prompt_cache_key", "user"};
  const auto key = rolter::first_string_field(body, kFields);
  if (!key) return 0;
  if (key->empty()) std::abort();
  const auto json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return 0;
  // nlohmann keeps the last of repeated keys, the reader the first: only a body without repeats
  // can be compared. Telling a repeat apart exactly needs a parser of its own, so only plain
  // bodies are compared: no escapes (a key may be spelled with \u escapes) and each field's name
  // quoted at most once.
  // Every field counts, not only the one compared: a repeated earlier field may be a string on
  // its first occurrence (the reader's answer) and a number on its last (nlohmann's).
  if (body.find('\\') != std::string_view::npos) return 0;
  for (std::string_view field : kFields) {
    const std::string quoted = "\"" + std::string(field) + "\"";
    if (body.find(quoted) != body.rfind(quoted)) return 0;  // maybe a repeat
  }
  for (std::string_view field : kFields) {
    auto it = json.find(std::string(field));
    if (it == json.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) {
      continue;
    }
    if (it->get_ref<const std::string&>() != *key) std::abort();
    return 0;
  }
  return 0;
}
