// libFuzzer target for the decision service's reply reader (read_decision_reply).
//
// Beyond "never crash", it checks what a verdict promises the policy balancer: a confidence in
// (0, 1], at least one probability, and every probability in [0, 1].
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "proxy/decision_protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const auto verdict = rolter::read_decision_reply(body);
  if (!verdict) return 0;
  if (!(verdict->confidence > 0 && verdict->confidence <= 1)) std::abort();
  if (verdict->probabilities.empty()) std::abort();
  for (const auto& [model, p] : verdict->probabilities) {
    if (!(p >= 0 && p <= 1)) std::abort();
  }
  return 0;
}
