// libFuzzer target: arbitrary bytes as rolter.toml. The loader must return a value (config or
// errors) for any input: no crash, no escaped exception, no sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "config/loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto loaded = rolter::load_config_text(text, "fuzz.toml");
  if (!loaded) {
    for (const auto& error : loaded.error()) (void)error.to_string();
  }
  return 0;
}
