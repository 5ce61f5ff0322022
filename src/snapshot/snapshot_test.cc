#include "snapshot/snapshot.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "config/loader.h"
#include "fleet/load_tracker.h"

namespace rolter {
namespace {

constexpr const char* kToml = R"(
[[providers]]
name = "hosted"
kind = "openai"
base_url = "http://127.0.0.1:9"
api_key_env = "HOSTED_KEY"

[[routes]]
name = "m"
targets = [{ provider = "hosted", model = "x" }]

[[keys]]
name = "team"
key_env = "TEAM_KEY"
)";

// The secrets of one test, looked up by name; an absent name is unset.
SecretLookup secrets_from(std::map<std::string, std::string> values) {
  return [values = std::move(values)](const std::string& name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

tl::expected<std::shared_ptr<const Snapshot>, std::vector<std::string>> build(
    LoadTracker& tracker, const SecretLookup& secrets) {
  auto loaded = load_config_text(kToml, "test.toml");
  EXPECT_TRUE(loaded.has_value());
  return build_snapshot(std::move(loaded->config), tracker, BalancerDeps{}, 1, nullptr, secrets);
}

TEST(BuildSnapshot, SecretsComeFromTheInjectedLookupNotTheEnvironment) {
  LoadTracker tracker;
  auto built = build(tracker, secrets_from({{"HOSTED_KEY", "sk-provider"}, {"TEAM_KEY", "rk-team"}}));
  ASSERT_TRUE(built.has_value()) << built.error().front();
  const Snapshot& snapshot = **built;
  const RoutePool* pin = snapshot.provider_pool("hosted");
  ASSERT_NE(pin, nullptr);
  ASSERT_EQ(pin->candidates.size(), 1u);
  EXPECT_EQ(pin->candidates[0].provider->api_key, "sk-provider");
  const ApiKey* key = snapshot.authenticate("rk-team");
  ASSERT_NE(key, nullptr);
  EXPECT_EQ(key->name, "team");
  EXPECT_EQ(snapshot.authenticate("rk-other"), nullptr);
  EXPECT_EQ(snapshot.model_ids(), std::vector<std::string>{"m"});
}

TEST(BuildSnapshot, EveryUnsetSecretIsReportedAtItsKey) {
  LoadTracker tracker;
  auto built = build(tracker, secrets_from({}));
  ASSERT_FALSE(built.has_value());
  const std::vector<std::string>& errors = built.error();
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0], "providers.hosted.api_key_env: environment variable HOSTED_KEY is not set");
  EXPECT_EQ(errors[1], "keys.team.key_env: environment variable TEAM_KEY is not set");
}

TEST(BuildSnapshot, TheDefaultLookupReadsTheEnvironment) {
  ::setenv("ROLTER_SNAPSHOT_TEST_SECRET", "value", 1);
  EXPECT_EQ(environment_secret("ROLTER_SNAPSHOT_TEST_SECRET"), "value");
  ::setenv("ROLTER_SNAPSHOT_TEST_SECRET", "", 1);
  EXPECT_EQ(environment_secret("ROLTER_SNAPSHOT_TEST_SECRET"), std::nullopt) << "empty is unset";
  ::unsetenv("ROLTER_SNAPSHOT_TEST_SECRET");
  EXPECT_EQ(environment_secret("ROLTER_SNAPSHOT_TEST_SECRET"), std::nullopt);
}

}  // namespace
}  // namespace rolter
