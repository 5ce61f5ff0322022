// server.access_log (SPEC §17): "stderr" (the default), "off" or a file. The file must be one
// rolter can append to or create where the config runs (`rolter check`, `rolter serve`), reported
// by key; a control plane, which cannot see its nodes' disks, checks the form alone.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "config/loader.h"
#include "config/testing/load_fixture.h"

namespace rolter {
namespace {

// A fleet of one provider and one route, open (no keys: a warning only), with `server` as its
// [server] table.
std::string with_server(const std::string& server) {
  return "[server]\n" + server + R"(
[[providers]]
name = "a"
base_url = "http://127.0.0.1:8001"

[[routes]]
name = "m"
[[routes.targets]]
provider = "a"
model = "m1"
)";
}

tl::expected<LoadedConfig, ConfigErrors> load_as(const std::string& text, bool local) {
  return load_config_text(text, "test.toml", {.local_secrets = local});
}

class AccessLogConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("rolter_access_log_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_ / "logs");
    std::ofstream(dir_ / "logs" / "existing.log") << "a line from before\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

TEST_F(AccessLogConfig, DefaultsToStderr) {
  auto loaded = load_as(with_server(""), true);
  ASSERT_TRUE(loaded) << dump(loaded.error());
  EXPECT_EQ(loaded->config.server.access_log, "stderr");
}

TEST_F(AccessLogConfig, AcceptedDestinations) {
  const std::string accepted[] = {"stderr", "off", path("logs/existing.log"), path("logs/new.log"),
                                  "/dev/null"};
  for (const auto& destination : accepted) {
    auto loaded = load_as(with_server("access_log = \"" + destination + "\"\n"), true);
    ASSERT_TRUE(loaded) << destination << "\n" << dump(loaded.error());
    EXPECT_EQ(loaded->config.server.access_log, destination);
  }
  EXPECT_FALSE(std::filesystem::exists(path("logs/new.log"))) << "checking creates nothing";
}

struct Case {
  std::string value;
  bool local;
  std::string fragment;  // of the one error, at server.access_log
};

TEST_F(AccessLogConfig, RefusedDestinations) {
  const Case cases[] = {
      {"", false, R"(must be "stderr", "off" or a file path)"},
      {path("logs/"), false, "names a directory, not a file"},
      {path("logs"), true, "is a directory, not a file"},
      {path("missing/access.log"), true,
       "cannot create \"" + path("missing/access.log") + "\": no directory \"" + path("missing") +
           "\""},
      {path("logs/existing.log/x"), true, "cannot"},
  };
  for (const auto& c : cases) {
    const std::string text = with_server("access_log = \"" + c.value + "\"  # <-\n");
    SCOPED_TRACE(text);
    auto loaded = load_as(text, c.local);
    ASSERT_FALSE(loaded);
    ASSERT_EQ(loaded.error().size(), 1u) << dump(loaded.error());
    const ConfigError& e = loaded.error()[0];
    EXPECT_EQ(e.key, "server.access_log");
    EXPECT_EQ(e.line, line_of(text, kErrorMarker));
    EXPECT_NE(e.message.find(c.fragment), std::string::npos) << dump(loaded.error());
  }
  auto not_a_string = load_as(with_server("access_log = false\n"), false);
  ASSERT_FALSE(not_a_string);
  EXPECT_EQ(not_a_string.error()[0].key, "server.access_log");
}

// A control plane validates for nodes whose disks it cannot see: the form alone.
TEST_F(AccessLogConfig, AControlPlaneChecksTheFormOnly) {
  EXPECT_TRUE(load_as(with_server("access_log = \"" + path("missing/a.log") + "\"\n"), false));
  EXPECT_TRUE(load_as(with_server("access_log = \"" + path("logs") + "\"\n"), false));
}

TEST_F(AccessLogConfig, ARelativePathIsBesideTheConfig) {
  std::ofstream(dir_ / "rolter.toml") << with_server("access_log = \"logs/access.log\"\n");
  auto loaded = load_config_file(path("rolter.toml"), {.local_secrets = true});
  ASSERT_TRUE(loaded) << dump(loaded.error());
  EXPECT_EQ(loaded->config.server.access_log, path("logs/access.log"));
}

}  // namespace
}  // namespace rolter
