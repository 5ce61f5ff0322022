// SPEC §16 in the config: provider keys from a variable or a file (checked where the config runs),
// fixed headers, the [anthropic] defaults, and route fallbacks (unknown routes, loops).

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "config/loader.h"
#include "config/secret_file.h"
#include "config/testing/load_fixture.h"

namespace rolter {
namespace {

std::string temp_path(const std::string& name) { return ::testing::TempDir() + name; }

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// Loads as `rolter check` does: secrets must be present here.
tl::expected<LoadedConfig, ConfigErrors> load_local(std::string_view text) {
  return load_config_text(without_leading_newline(text), "test.toml", {.local_secrets = true});
}

std::string provider_with(const std::string& extra) {
  return R"(
[[providers]]
name = "p"
base_url = "https://api.example.com/v1"
)" + extra + R"(
[[routes]]
name = "m"
[[routes.targets]]
provider = "p"
model = "x"
)";
}

TEST(SecretFile, TrimsTheLineEndAndRefusesWhatIsNotAKey) {
  const std::string path = temp_path("rolter_secret_file");
  struct Case {
    std::string content;
    std::string want;   // the value, or
    std::string error;  // a fragment of the error
  };
  const Case cases[] = {
      {"sk-one\n", "sk-one", ""},
      {"sk-two\r\n", "sk-two", ""},
      {"sk-three", "sk-three", ""},
      {"", "", "is empty"},
      {"\n", "", "is empty"},
      {"a\nb\n", "", "more than one line"},
      {std::string(kMaxSecretFileBytes + 1, 'k'), "", "larger than a secret"},
  };
  for (const Case& c : cases) {
    write(path, c.content);
    auto value = read_secret_file(path);
    if (c.error.empty()) {
      ASSERT_TRUE(value) << value.error();
      EXPECT_EQ(*value, c.want);
    } else {
      ASSERT_FALSE(value) << c.content;
      EXPECT_NE(value.error().find(c.error), std::string::npos) << value.error();
      EXPECT_EQ(value.error().find("sk-"), std::string::npos) << "the value is never shown";
    }
  }
  std::remove(path.c_str());
  auto missing = read_secret_file(path);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("No such file"), std::string::npos) << missing.error();
}

TEST(ProviderKeys, AFileOrAVariableMustHoldAValueWhereTheConfigRuns) {
  const std::string key_file = temp_path("rolter_provider_key");
  const std::string empty_file = temp_path("rolter_provider_key_empty");
  write(key_file, "sk-file\n");
  write(empty_file, "\n");
  ::setenv("ROLTER_PROVIDERS_TEST_KEY", "sk-env", 1);
  ::unsetenv("ROLTER_PROVIDERS_TEST_UNSET");
  struct Case {
    std::string extra;
    std::string error;  // empty: loads
  };
  const Case cases[] = {
      {"api_key_file = \"" + key_file + "\"  # <-\n", ""},
      {"api_key_env = \"ROLTER_PROVIDERS_TEST_KEY\"  # <-\n", ""},
      {"api_key_file = \"" + empty_file + "\"  # <-\n", "is empty"},
      {"api_key_file = \"" + temp_path("rolter_no_such_key") + "\"  # <-\n", "No such file"},
      {"api_key_file = \"\"  # <-\n", "must not be empty"},
      {"api_key_env = \"ROLTER_PROVIDERS_TEST_UNSET\"  # <-\n", "is not set or empty"},
      {"api_key_env = \"ROLTER_PROVIDERS_TEST_KEY\"\napi_key_file = \"" + key_file + "\"  # <-\n",
       "not both"},
  };
  for (const Case& c : cases) {
    const std::string toml = provider_with(c.extra);
    SCOPED_TRACE(toml);
    auto loaded = load_local(toml);
    if (c.error.empty()) {
      EXPECT_TRUE(loaded) << dump(loaded.error());
      continue;
    }
    ASSERT_FALSE(loaded);
    ASSERT_EQ(loaded.error().size(), 1u) << dump(loaded.error());
    const ConfigError& e = loaded.error()[0];
    EXPECT_EQ(e.line, line_of(toml, kErrorMarker)) << dump(loaded.error());
    EXPECT_NE(e.message.find(c.error), std::string::npos) << dump(loaded.error());
  }
  // A control plane validates for nodes whose environment it cannot see: not checked there.
  EXPECT_TRUE(load(provider_with("api_key_env = \"ROLTER_PROVIDERS_TEST_UNSET\"\n")));
  EXPECT_TRUE(load(provider_with("api_key_file = \"" + temp_path("rolter_no_such_key") + "\"\n")));
  std::remove(key_file.c_str());
  std::remove(empty_file.c_str());
}

TEST(ProviderKeys, ARelativeKeyFileIsBesideTheConfig) {
  const std::string dir = temp_path("rolter_providers_dir");
  std::filesystem::create_directories(dir);
  write(dir + "/key.txt", "sk-beside\n");
  write(dir + "/rolter.toml", std::string(without_leading_newline(
                                  provider_with("api_key_file = \"key.txt\"\n"))));
  auto loaded = load_config_file(dir + "/rolter.toml", {.local_secrets = true});
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(loaded) << dump(loaded.error());
  EXPECT_EQ(loaded->config.providers[0].api_key_file, dir + "/key.txt");
}

TEST(ProviderHeaders, AddFieldsButNeverTheGatewaysOwn) {
  auto loaded = load(provider_with("[providers.headers]\napi-key = \"abc\"\napi-version = \"1\"\n"));
  ASSERT_TRUE(loaded) << dump(loaded.error());
  const auto& headers = loaded->config.providers[0].headers;
  ASSERT_EQ(headers.size(), 2u);
  EXPECT_EQ(headers[0], (std::pair<std::string, std::string>{"api-key", "abc"}));
  EXPECT_EQ(headers[1], (std::pair<std::string, std::string>{"api-version", "1"}));
  const ErrorCase cases[] = {
      {provider_with("[providers.headers]\nContent-Length = \"1\"  # <-\n"),
       "providers[0].headers.Content-Length", "set by the gateway itself"},
      {provider_with("[providers.headers]\nauthorization = \"Bearer x\"  # <-\n"),
       "providers[0].headers.authorization", "set by the gateway itself"},
      {provider_with("[providers.headers]\n\"bad name\" = \"1\"  # <-\n"),
       "providers[0].headers.\"bad name\"", "not a header name"},
      {provider_with("[providers.headers]\nx-a = \"1\\r\\nx-b: 2\"  # <-\n"),
       "providers[0].headers.x-a", "one line"},
      {provider_with("[providers.headers]\nx-a = 1  # <-\n"), "providers[0].headers.x-a",
       "expected string"},
  };
  for (const auto& c : cases) expect_one_error(c);
}

TEST(Anthropic, DefaultMaxTokens) {
  auto defaults = load(provider_with(""));
  ASSERT_TRUE(defaults);
  EXPECT_EQ(defaults->config.anthropic.default_max_tokens, 4096u);
  auto set = load(provider_with("") + "[anthropic]\ndefault_max_tokens = 512\n");
  ASSERT_TRUE(set) << dump(set.error());
  EXPECT_EQ(set->config.anthropic.default_max_tokens, 512u);
  expect_one_error({provider_with("") + "[anthropic]\ndefault_max_tokens = 0  # <-\n",
                    "anthropic.default_max_tokens", "must be >= 1"});
  expect_one_error({provider_with("") + "[anthropic]\nversion = \"x\"  # <-\n",
                    "anthropic.version", "unknown key"});
}

std::string routes(const std::string& a, const std::string& b, const std::string& c) {
  std::string out = R"(
[[providers]]
name = "p"
base_url = "http://127.0.0.1:8001"
)";
  const std::string extras[] = {a, b, c};
  const char* names[] = {"a", "b", "c"};
  for (int i = 0; i < 3; ++i) {
    out += std::string("[[routes]]\nname = \"") + names[i] + "\"\n" + extras[i] +
           "[[routes.targets]]\nprovider = \"p\"\nmodel = \"x\"\n";
  }
  return out;
}

TEST(Fallbacks, ReadInOrderWithTheirConditions) {
  auto loaded = load(routes("fallbacks = [\"b\", \"c\"]\nfallback_on = [\"context_length\"]\n",
                            "fallbacks = [\"c\"]\n", ""));
  ASSERT_TRUE(loaded) << dump(loaded.error());
  const auto& a = loaded->config.routes[0];
  EXPECT_EQ(a.fallbacks, (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(a.fallback_on, (std::vector<std::string>{"context_length"}));
  EXPECT_EQ(loaded->config.retry.max_fallbacks, 2u);
}

TEST(Fallbacks, UnknownRoutesConditionsAndLoopsAreErrors) {
  const ErrorCase cases[] = {
      {routes("fallbacks = [\"nope\"]  # <-\n", "", ""), "routes[0].fallbacks[0]",
       "unknown route \"nope\""},
      {routes("fallbacks = [\"a\"]  # <-\n", "", ""), "routes[0].fallbacks[0]", "itself"},
      {routes("fallbacks = [\"b\"]\nfallback_on = [\"sometimes\"]  # <-\n", "", ""),
       "routes[0].fallback_on[0]", "unknown condition \"sometimes\""},
      {routes("fallbacks = [\"b\"]\n", "fallbacks = [\"a\"]  # <-\n", ""), "routes[1].fallbacks",
       "loop: a -> b -> a"},
      {routes("fallbacks = [\"b\"]\n", "fallbacks = [\"c\"]\n", "fallbacks = [\"a\"]  # <-\n"),
       "routes[2].fallbacks", "loop: a -> b -> c -> a"},
  };
  for (const auto& c : cases) expect_one_error(c);
  // A diamond is not a loop.
  EXPECT_TRUE(load(routes("fallbacks = [\"b\", \"c\"]\n", "fallbacks = [\"c\"]\n", "")));
}

}  // namespace
}  // namespace rolter
