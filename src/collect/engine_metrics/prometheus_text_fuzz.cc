// Fuzzes the Prometheus text reader with what an engine's /metrics might send. Invariants: nothing
// crashes or reads outside the input (ASan sees the input as an exact-size buffer); comment lines
// change nothing; and one more sample line of a name adds exactly its value to that name's sum,
// unless an unreadable line had already voided it.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collect/engine_metrics/prometheus_text.h"

namespace {

constexpr std::string_view kNames[] = {"vllm:num_requests_running", "vllm:num_requests_waiting",
                                       "vllm:gpu_cache_usage_perc", "a"};

void check(bool ok) {
  if (!ok) std::abort();
}

bool same(std::optional<double> a, std::optional<double> b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  return (std::isnan(*a) && std::isnan(*b)) || *a == *b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A copy of exactly `size` bytes, so a read past the end is a heap overflow ASan reports.
  const std::vector<char> bytes(data, data + size);
  const std::string_view input(bytes.data(), bytes.size());
  for (std::string_view name : kNames) {
    const std::optional<double> sum = rolter::sum_samples(input, name);

    const std::string commented = "# HELP " + std::string(name) + " x\n# TYPE " +
                                  std::string(name) + " gauge\n" + std::string(input);
    check(same(rolter::sum_samples(commented, name), sum));

    // On a line of its own (the input may end mid-line).
    const std::string added = std::string(input) + "\n" + std::string(name) + "{x=\"}\"} 1\n";
    const std::optional<double> more = rolter::sum_samples(added, name);
    if (sum) {
      check(same(more, *sum + 1));
    } else {
      check(!more || *more == 1);
    }
  }
  return 0;
}
