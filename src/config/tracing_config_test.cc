// [tracing] (SPEC §17): what it reads into, its defaults, and the errors that name the key.
#include <gtest/gtest.h>

#include <string>

#include "config/testing/load_fixture.h"

namespace rolter {
namespace {

TEST(TracingConfig, Defaults) {
  auto loaded = load(kMinimal);
  ASSERT_TRUE(loaded) << dump(loaded.error());
  const TracingConfig& t = loaded->config.tracing;
  EXPECT_EQ(t.otlp_endpoint, "");
  EXPECT_EQ(t.sample_ratio, 0.01);
  EXPECT_EQ(t.max_queue, 2048u);
}

TEST(TracingConfig, ReadsEveryKey) {
  auto loaded = load(minimal_plus(R"(
[tracing]
otlp_endpoint = "http://127.0.0.1:4318/v1/traces"
sample_ratio = 0.5
max_queue = 100
)"));
  ASSERT_TRUE(loaded) << dump(loaded.error());
  const TracingConfig& t = loaded->config.tracing;
  EXPECT_EQ(t.otlp_endpoint, "http://127.0.0.1:4318/v1/traces");
  EXPECT_EQ(t.sample_ratio, 0.5);
  EXPECT_EQ(t.max_queue, 100u);
  for (const char* ratio : {"0", "1", "0.0", "1.0"}) {
    auto edge = load(minimal_plus(std::string("[tracing]\nsample_ratio = ") + ratio + "\n"));
    EXPECT_TRUE(edge) << ratio;
  }
}

TEST(TracingConfig, ErrorsNameTheKey) {
  const ErrorCase cases[] = {
      {minimal_plus("[tracing]\notlp_endpoint = \"localhost:4318\"  # <-\n"),
       "tracing.otlp_endpoint", "bad URL \"localhost:4318\""},
      {minimal_plus("[tracing]\notlp_endpoint = \"grpc://collector:4317\"  # <-\n"),
       "tracing.otlp_endpoint", "expected http://host:port/v1/traces"},
      {minimal_plus("[tracing]\notlp_endpoint = \"http://user:secret@c:4318\"  # <-\n"),
       "tracing.otlp_endpoint", "http://user:***@c:4318"},
      {minimal_plus("[tracing]\notlp_endpoint = \"\"  # <-\n"), "tracing.otlp_endpoint",
       "must not be empty"},
      {minimal_plus("[tracing]\nsample_ratio = 1.5  # <-\n"), "tracing.sample_ratio",
       "must be between 0 and 1"},
      {minimal_plus("[tracing]\nsample_ratio = -0.1  # <-\n"), "tracing.sample_ratio",
       "must be between 0 and 1"},
      {minimal_plus("[tracing]\nsample_ratio = \"all\"  # <-\n"), "tracing.sample_ratio",
       "expected"},
      {minimal_plus("[tracing]\nmax_queue = 0  # <-\n"), "tracing.max_queue", ">= 1"},
      {minimal_plus("[tracing]\nmax_queue = 2000000  # <-\n"), "tracing.max_queue", "<="},
      {minimal_plus("[tracing]\nendpoint = \"http://c:4318\"  # <-\n"), "tracing.endpoint",
       "unknown"},
  };
  for (const ErrorCase& c : cases) expect_one_error(c);
}

}  // namespace
}  // namespace rolter
