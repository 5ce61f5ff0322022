#include "common/shared_library.h"

#include <gtest/gtest.h>

#include <cstring>

namespace rolter {
namespace {

TEST(SharedLibraryTest, OpensALibraryAndFindsItsFunctions) {
  auto lib = SharedLibrary::open("libc.so.6");
  ASSERT_TRUE(lib.has_value()) << lib.error();
  EXPECT_EQ(lib->soname(), "libc.so.6");
  auto* length = lib->symbol<decltype(std::strlen)>("strlen");
  ASSERT_NE(length, nullptr);
  EXPECT_EQ(length("rolter"), 6u);
  EXPECT_EQ(lib->symbol<void()>("no_such_function_in_libc"), nullptr);
}

TEST(SharedLibraryTest, AMissingLibraryIsAClearError) {
  auto lib = SharedLibrary::open("librolter-missing.so.0");
  ASSERT_FALSE(lib.has_value());
  EXPECT_NE(lib.error().find("cannot load librolter-missing.so.0: "), std::string::npos)
      << lib.error();
  EXPECT_NE(lib.error().find("No such file"), std::string::npos) << lib.error();
}

}  // namespace
}  // namespace rolter
