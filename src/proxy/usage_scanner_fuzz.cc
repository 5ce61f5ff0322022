// Feeds arbitrary bytes to the UsageScanner, split into chunks at arbitrary points (the first byte
// chooses the chunk size), and checks that splitting never changes what it finds. The same bytes
// go through drop_usage_events(), which may only remove whole usage-only events: what it keeps is
// the input less some events, and a second pass removes nothing more.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "proxy/usage_chunk.h"
#include "proxy/usage_scanner.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t step = 1 + data[0] % 97;
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  rolter::UsageScanner whole;
  whole.feed(body);
  rolter::UsageScanner pieces;
  for (size_t at = 0; at < body.size(); at += step) pieces.feed(body.substr(at, step));
  // Splitting may only reveal values the whole-body scan also sees at the end, as the last match
  // of each field decides; the two must agree.
  if (whole.input_tokens() != pieces.input_tokens() ||
      whole.output_tokens() != pieces.output_tokens() ||
      whole.cached_input_tokens() != pieces.cached_input_tokens()) {
    std::abort();
  }
  std::string events(body);
  events.resize(rolter::drop_usage_events(events.data(), events.size()));
  if (events.size() > body.size()) std::abort();
  const size_t again = rolter::drop_usage_events(events.data(), events.size());
  if (again != events.size()) std::abort();
  return 0;
}
