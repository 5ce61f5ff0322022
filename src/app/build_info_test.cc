#include "app/build_info.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>

namespace rolter {
namespace {

TEST(BuildInfo, CarriesTheProjectVersionAndBuildType) {
  EXPECT_EQ(build_info().version, ROLTER_VERSION);
  EXPECT_EQ(build_info().build_type, ROLTER_EXPECTED_BUILD_TYPE);
}

TEST(BuildInfo, CommitIsAShortHashOrUnknown) {
  const std::string commit(build_info().commit);
  EXPECT_TRUE(commit == "unknown" ||
              std::regex_match(commit, std::regex("[0-9a-f]{7,40}(-dirty)?")))
      << commit;
}

TEST(BuildInfo, VersionTextNamesAllThree) {
  EXPECT_EQ(version_text({.version = "1.2.3", .commit = "abc1234", .build_type = "Release"}),
            "rolter 1.2.3 (commit abc1234, Release)");
}

}  // namespace
}  // namespace rolter
