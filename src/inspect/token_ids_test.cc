#include "inspect/token_ids.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rolter {
namespace {

std::vector<uint32_t> parse_ok(std::string_view value) {
  std::vector<uint32_t> ids;
  auto ok = parse_token_ids_header(value, ids);
  EXPECT_TRUE(ok) << "'" << value << "': " << (ok ? "" : ok.error().message);
  return ids;
}

std::string parse_error(std::string_view value) {
  std::vector<uint32_t> ids{99};
  auto ok = parse_token_ids_header(value, ids);
  EXPECT_FALSE(ok) << "accepted '" << value << "'";
  if (ok) return "";
  EXPECT_EQ(ok.error().code, InspectErrorCode::kBadTokenIds);
  EXPECT_TRUE(ids.empty()) << "'" << value << "' left ids behind";
  EXPECT_NE(ok.error().message.find(kTokenIdsHeader), std::string::npos);
  return ok.error().message;
}

TEST(TokenIdsHeaderTest, ParsesCommaSeparatedIds) {
  EXPECT_EQ(parse_ok("0"), std::vector<uint32_t>{0});
  EXPECT_EQ(parse_ok("1,2,3"), (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(parse_ok("151643,  9707 ,\t11"), (std::vector<uint32_t>{151643, 9707, 11}));
  EXPECT_EQ(parse_ok("  7  "), std::vector<uint32_t>{7});
  EXPECT_EQ(parse_ok("4294967295"), std::vector<uint32_t>{4294967295u});
  EXPECT_EQ(parse_ok("007"), std::vector<uint32_t>{7});
}

TEST(TokenIdsHeaderTest, RejectsMalformedValues) {
  EXPECT_NE(parse_error("").find("empty"), std::string::npos);
  EXPECT_NE(parse_error("   ").find("empty"), std::string::npos);
  EXPECT_NE(parse_error("1,2,").find("after ','"), std::string::npos);
  EXPECT_NE(parse_error("1,2, ").find("after ','"), std::string::npos);
  EXPECT_NE(parse_error(",1").find("at byte 0"), std::string::npos);
  EXPECT_NE(parse_error("1,,2").find("at byte 2"), std::string::npos);
  EXPECT_NE(parse_error("4294967296").find("32 bits"), std::string::npos);
  EXPECT_NE(parse_error("1,99999999999999999999999").find("32 bits"), std::string::npos);
  parse_error("-1");
  parse_error("+1");
  parse_error("1;2");
  parse_error("1 2");
  parse_error("0x10");
  parse_error("1.5");
  parse_error("a");
  parse_error("1,a");
  parse_error("1\n,2");
  parse_error(std::string_view("1\0", 2));
}

TEST(TokenIdsHeaderTest, ReusesCapacity) {
  std::vector<uint32_t> ids;
  ASSERT_TRUE(parse_token_ids_header("1,2,3,4,5,6,7,8,9,10", ids));
  const uint32_t* data = ids.data();
  ASSERT_TRUE(parse_token_ids_header("5, 6", ids));
  EXPECT_EQ(ids, (std::vector<uint32_t>{5, 6}));
  EXPECT_EQ(ids.data(), data);
}

}  // namespace
}  // namespace rolter
