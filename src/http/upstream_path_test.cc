#include "http/upstream_path.h"

#include <gtest/gtest.h>

namespace rolter {
namespace {

struct Case {
  const char* base;
  const char* target;
  const char* want;
};

TEST(UpstreamPath, JoinsWithoutRepeatingTheVersion) {
  const Case cases[] = {
      // Both spellings of an OpenAI-style base URL reach the same path.
      {"", "/v1/chat/completions", "/v1/chat/completions"},
      {"/v1", "/v1/chat/completions", "/v1/chat/completions"},
      {"/openai/v1", "/v1/chat/completions", "/openai/v1/chat/completions"},
      {"/openai", "/v1/chat/completions", "/openai/v1/chat/completions"},
      // Gemini's version, and a query that is carried along.
      {"/v1beta", "/v1beta/models/m:streamGenerateContent?alt=sse",
       "/v1beta/models/m:streamGenerateContent?alt=sse"},
      {"", "/v1beta/models/m:generateContent", "/v1beta/models/m:generateContent"},
      // Another version on the target: the base's is kept (a prefix, as written).
      {"/v1", "/v1beta/models", "/v1/v1beta/models"},
      // Engine root paths beside a versioned API root.
      {"/v1", "/metrics", "/metrics"},
      {"/v1", "/tokenize", "/tokenize"},
      {"/engine/v1", "/health", "/engine/health"},
      {"/v1", "/v1", "/v1"},
      {"/v1", "/v1?x=1", "/v1?x=1"},
      // Not versions: plain prefixes.
      {"/api", "/metrics", "/api/metrics"},
      {"/version", "/v1/models", "/version/v1/models"},
      {"/v", "/v1/models", "/v/v1/models"},
      {"/vX1", "/v1/models", "/vX1/v1/models"},
      {"/V1", "/v1/models", "/V1/v1/models"},
      {"/v1", "/v10/models", "/v1/v10/models"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(upstream_path(c.base, c.target), c.want) << c.base << " + " << c.target;
  }
}

TEST(UpstreamPath, TheBaseIsAPrefixOfTheBasePath) {
  EXPECT_EQ(upstream_base("/v1", "/v1/messages"), "");
  EXPECT_EQ(upstream_base("/api/v1", "/v1/messages"), "/api");
  EXPECT_EQ(upstream_base("/api/v1", "/health"), "/api");
  EXPECT_EQ(upstream_base("/api", "/v1/messages"), "/api");
}

}  // namespace
}  // namespace rolter
