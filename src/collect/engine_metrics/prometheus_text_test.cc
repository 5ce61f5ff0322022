#include "collect/engine_metrics/prometheus_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace rolter {
namespace {

constexpr std::string_view kRunning = "vllm:num_requests_running";
constexpr double kInf = std::numeric_limits<double>::infinity();

// What rolter-sim and vLLM (0.6 to 0.9) serve, trimmed: HELP and TYPE lines, one series per model.
constexpr std::string_view kVllm =
    R"(# HELP vllm:num_requests_running Number of requests currently running on GPU.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="Qwen/Qwen3-8B"} 3.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{model_name="Qwen/Qwen3-8B"} 2.0
# HELP vllm:gpu_cache_usage_perc GPU KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:gpu_cache_usage_perc gauge
vllm:gpu_cache_usage_perc{model_name="Qwen/Qwen3-8B"} 0.4375
# HELP vllm:num_requests_running_total A longer name that shares the prefix.
vllm:num_requests_running_total 100
)";

struct Case {
  const char* what;
  std::string text;
  std::optional<double> expected;  // for kRunning
};

TEST(PrometheusText, SumsSamplesOfOneName) {
  const Case cases[] = {
      {"vLLM's exposition", std::string(kVllm), 3},
      {"no labels", "vllm:num_requests_running 4\n", 4},
      {"empty label set", "vllm:num_requests_running{} 4\n", 4},
      {"series of every model summed",
       "vllm:num_requests_running{model_name=\"a\"} 1\n"
       "vllm:num_requests_running{model_name=\"b\"} 2.5\n"
       "vllm:num_requests_running{model_name=\"c\",engine=\"0\"} 3\n",
       6.5},
      {"several labels, trailing comma", "vllm:num_requests_running{a=\"1\",b=\"2\",} 5\n", 5},
      {"blanks and tabs between tokens",
       "  vllm:num_requests_running \t{ a = \"1\" , b=\"2\" }\t 7  \n", 7},
      {"escaped quote, backslash and newline in a value",
       "vllm:num_requests_running{model_name=\"a\\\"b\\\\\\nc\"} 2\n", 2},
      {"'}', ',', '#' and blanks inside a value",
       "vllm:num_requests_running{model_name=\"x} 9, # y\"} 2\n", 2},
      {"a timestamp after the value", "vllm:num_requests_running 3 1712345678901\n", 3},
      {"an OpenMetrics exemplar after the value",
       "vllm:num_requests_running 3 # {trace_id=\"abc\"} 1.0\n", 3},
      {"CRLF line ends",
       "# TYPE vllm:num_requests_running gauge\r\nvllm:num_requests_running 2\r\n", 2},
      {"no newline at the end", "vllm:num_requests_running 2", 2},
      {"exponent and leading sign",
       "vllm:num_requests_running 1.5e1\nvllm:num_requests_running -5\n", 10},
      {"+Inf", "vllm:num_requests_running +Inf\n", kInf},
      {"-Inf and a finite value", "vllm:num_requests_running -Inf\nvllm:num_requests_running 1\n",
       -kInf},
      {"a commented-out sample is a comment", "#vllm:num_requests_running 9\n", std::nullopt},
      {"absent", "vllm:num_requests_waiting 3\n", std::nullopt},
      {"only a longer name with the same prefix", "vllm:num_requests_running_total 3\n",
       std::nullopt},
      {"only a shorter name", "vllm:num_requests 3\n", std::nullopt},
      {"empty text", "", std::nullopt},
      {"blank lines only", "\n\n  \n", std::nullopt},
      // A line of the name that cannot be read voids the sum: a partial one would understate.
      {"no value", "vllm:num_requests_running 1\nvllm:num_requests_running\n", std::nullopt},
      {"a value that is not a number", "vllm:num_requests_running three\n", std::nullopt},
      {"trailing junk in the value", "vllm:num_requests_running 3x\n", std::nullopt},
      {"a hexadecimal value", "vllm:num_requests_running 0x10\n", std::nullopt},
      {"double sign", "vllm:num_requests_running +-1\n", std::nullopt},
      {"a value out of double's range", "vllm:num_requests_running 1e999\n", std::nullopt},
      {"unterminated label value", "vllm:num_requests_running{a=\"1} 3\n", std::nullopt},
      {"a label value cut by the newline",
       "vllm:num_requests_running{a=\"1\n\"} 3\nvllm:num_requests_running 1\n", std::nullopt},
      {"a backslash ending the text", "vllm:num_requests_running{a=\"\\", std::nullopt},
      {"unquoted label value", "vllm:num_requests_running{a=1} 3\n", std::nullopt},
      {"label without '='", "vllm:num_requests_running{a} 3\n", std::nullopt},
      {"no closing brace", "vllm:num_requests_running{a=\"1\" 3\n", std::nullopt},
      {"labels not separated by a comma", "vllm:num_requests_running{a=\"1\" b=\"2\"} 3\n",
       std::nullopt},
      // Lines of other names are not read at all, so their faults cost nothing.
      {"a broken line of another name", "other{a=\"1} x\nvllm:num_requests_running 2\n", 2},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(sum_samples(c.text, kRunning), c.expected) << c.text;
  }
}

TEST(PrometheusText, NaNSampleMakesTheSumNaN) {
  for (std::string_view value : {"NaN", "nan", "-NaN"}) {
    const std::string text =
        "vllm:num_requests_running 1\nvllm:num_requests_running " + std::string(value) + "\n";
    const auto sum = sum_samples(text, kRunning);
    ASSERT_TRUE(sum.has_value()) << value;
    EXPECT_TRUE(std::isnan(*sum)) << value;
  }
}

TEST(PrometheusText, OtherNamesOfTheSameText) {
  EXPECT_EQ(sum_samples(kVllm, "vllm:num_requests_waiting"), 2);
  EXPECT_EQ(sum_samples(kVllm, "vllm:gpu_cache_usage_perc"), 0.4375);
  EXPECT_EQ(sum_samples(kVllm, "vllm:num_requests_running_total"), 100);
  EXPECT_EQ(sum_samples(kVllm, ""), std::nullopt) << "an empty name matches nothing";
}

// Reads stop at the end of the view even when the bytes after it would continue the line.
TEST(PrometheusText, ReadsOnlyInsideTheView) {
  const std::string whole = "vllm:num_requests_running{a=\"1\"} 25";
  for (size_t cut = 0; cut < whole.size(); ++cut) {
    const std::string_view view(whole.data(), cut);
    const auto sum = sum_samples(view, kRunning);
    // Cut inside the value, only its first digit is left; anywhere before it, nothing is read.
    if (cut == whole.size() - 1) {
      EXPECT_EQ(sum, 2) << view;
    } else {
      EXPECT_EQ(sum, std::nullopt) << view;
    }
  }
}

}  // namespace
}  // namespace rolter
