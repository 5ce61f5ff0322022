#include "collect/follow/saved_snapshot.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace rolter {
namespace {

namespace fs = std::filesystem;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class SavedSnapshotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/rolter_saved_snapshot_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    root_ = pattern;
  }
  void TearDown() override { fs::remove_all(root_); }
  std::string root_;
};

TEST_F(SavedSnapshotTest, NoneSavedIsNotAnError) {
  auto saved = read_saved_snapshot(root_ + "/state");
  ASSERT_TRUE(saved) << saved.error();
  EXPECT_FALSE(saved->has_value());
}

// The directory is created (mode 0700, parents too), the file is the version line and the
// document byte for byte (mode 0600), no temporary file is left, and a second write replaces it.
TEST_F(SavedSnapshotTest, WritesAtomicallyAndReadsBack) {
  const std::string dir = root_ + "/state/node";
  const std::string doc = "[[routes]]\nname = \"m\"\n# no trailing newline";
  ASSERT_TRUE(write_saved_snapshot(dir, {7, doc}, "from http://cp at 2025-01-31T12:00:00Z"));
  const std::string path = saved_snapshot_path(dir);
  EXPECT_EQ(read_file(path),
            "# rolter snapshot version 7 from http://cp at 2025-01-31T12:00:00Z\n" + doc);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  struct stat st {};
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  auto saved = read_saved_snapshot(dir);
  ASSERT_TRUE(saved && *saved);
  EXPECT_EQ((*saved)->version, 7u);
  EXPECT_EQ((*saved)->toml, doc);

  ASSERT_TRUE(write_saved_snapshot(dir, {8, "x = 1\n"}, ""));
  saved = read_saved_snapshot(dir);
  ASSERT_TRUE(saved && *saved);
  EXPECT_EQ((*saved)->version, 8u);
  EXPECT_EQ((*saved)->toml, "x = 1\n");
}

TEST(SavedSnapshotParseTest, FirstLineMustCarryTheVersion) {
  const struct {
    const char* text;
    bool ok;
    uint64_t version;
    const char* toml;
  } kCases[] = {
      {"# rolter snapshot version 42 from x at y\na = 1\n", true, 42, "a = 1\n"},
      {"# rolter snapshot version 42\na = 1\n", true, 42, "a = 1\n"},
      {"# rolter snapshot version 3", true, 3, ""},
      {"# rolter snapshot version 0\n", false, 0, ""},
      {"# rolter snapshot version x\n", false, 0, ""},
      {"# rolter snapshot version 12abc\n", false, 0, ""},
      {"# rolter snapshot version -1\n", false, 0, ""},
      {"a = 1\n", false, 0, ""},
      {"", false, 0, ""},
  };
  for (const auto& c : kCases) {
    const auto parsed = parse_saved_snapshot(c.text);
    ASSERT_EQ(parsed.has_value(), c.ok) << c.text;
    if (!c.ok) continue;
    EXPECT_EQ(parsed->version, c.version) << c.text;
    EXPECT_EQ(parsed->toml, c.toml) << c.text;
  }
}

TEST_F(SavedSnapshotTest, UnreadableFileIsAnError) {
  const std::string dir = root_ + "/state";
  fs::create_directories(dir);
  std::ofstream(saved_snapshot_path(dir)) << "not a saved snapshot\n";
  const auto saved = read_saved_snapshot(dir);
  ASSERT_FALSE(saved);
  EXPECT_NE(saved.error().find("snapshot.toml"), std::string::npos) << saved.error();
}

}  // namespace
}  // namespace rolter
