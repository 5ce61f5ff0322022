#include "app/provider_calls.h"

#include <gtest/gtest.h>

#include "config/loader.h"

namespace rolter {
namespace {

TEST(ProviderCalls, OneExampleLinePerProviderWithTheJoinedPath) {
  auto loaded = load_config_text(R"(
[[providers]]
name = "openai"
base_url = "https://api.openai.com/v1"
[[providers]]
name = "bare"
base_url = "https://api.openai.com"
[[providers]]
name = "claude"
kind = "anthropic"
base_url = "https://api.anthropic.com"
[[providers]]
name = "gemini"
kind = "gemini"
base_url = "https://generativelanguage.googleapis.com/v1beta"
[[providers]]
name = "fleet"
[[providers.instances]]
base_url = "http://10.0.0.5:8000/v1"
[[providers.instances]]
base_url = "http://10.0.0.6:8000/v1"
[[providers]]
name = "pods"
discover = "dns://vllm-headless.llm.svc.cluster.local:8000/v1"
[[providers]]
name = "decider"
kind = "decision_service"
base_url = "http://decider:9000"
[[routes]]
name = "m"
targets = [{ provider = "openai", model = "x" }]
)",
                                 "test.toml");
  ASSERT_TRUE(loaded) << loaded.error().front().to_string();
  const std::vector<std::string> want = {
      "openai (openai): POST https://api.openai.com/v1/chat/completions",
      "bare (openai): POST https://api.openai.com/v1/chat/completions",
      "claude (anthropic): POST https://api.anthropic.com/v1/messages",
      "gemini (gemini): POST "
      "https://generativelanguage.googleapis.com/v1beta/models/{model}:generateContent",
      "fleet (openai): POST http://10.0.0.5:8000/v1/chat/completions (and 1 more instances)",
      "pods (openai): POST http://{instance}/v1/chat/completions, each instance found at "
      "dns://vllm-headless.llm.svc.cluster.local:8000/v1 every 5000 ms",
  };
  EXPECT_EQ(describe_provider_calls(loaded->config), want);
}

}  // namespace
}  // namespace rolter
