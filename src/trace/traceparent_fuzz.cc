// Fuzzes what the gateway reads from a client's tracing fields: `traceparent` and `x-request-id`.
// Invariants: nothing crashes; a traceparent that parses has non-zero ids, and the version-00
// value written from it parses back to the same trace id, parent id and sampled flag; a request
// id is either the client's (when valid) or a well-formed UUIDv7.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "trace/request_id.h"
#include "trace/traceparent.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  if (const auto parent = rolter::parse_traceparent(input)) {
    check(!parent->trace_id.is_zero() && !parent->parent_id.is_zero());
    char out[rolter::kTraceparentLength];
    rolter::format_traceparent(parent->trace_id, parent->parent_id, parent->sampled(), out);
    const auto back = rolter::parse_traceparent(std::string_view(out, sizeof out));
    check(back.has_value());
    check(back->trace_id == parent->trace_id && back->parent_id == parent->parent_id);
    check(back->sampled() == parent->sampled());
  }
  rolter::SeededRandom random(size);
  rolter::RequestId id;
  const bool taken = id.assign(input, size, random);
  check(taken == rolter::is_valid_request_id(input));
  if (taken) {
    check(id.view() == input);
  } else {
    check(id.view().size() == rolter::kUuidLength && id.view()[14] == '7');
  }
  return 0;
}
