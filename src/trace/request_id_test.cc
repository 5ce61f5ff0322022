#include "trace/request_id.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace rolter {
namespace {

TEST(RequestId, WhatAClientMaySend) {
  struct Case {
    std::string value;
    bool valid;
  };
  const Case cases[] = {
      {"a", true},
      {"req-42", true},
      {"!~{}[]\"'", true},
      {std::string(128, 'x'), true},
      {"", false},
      {std::string(129, 'x'), false},
      {"has space", false},
      {"tab\there", false},
      {"new\nline", false},
      {"del\x7f", false},
      {"caf\xc3\xa9", false},
  };
  for (const Case& c : cases) EXPECT_EQ(is_valid_request_id(c.value), c.valid) << c.value;
}

bool is_lower_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

TEST(RequestId, UuidV7Layout) {
  SeededRandom random(7);
  // 2024-01-01T00:00:00Z in milliseconds: 0x018cc251f400.
  const uint64_t unix_ms = 1704067200000;
  char out[kUuidLength];
  write_uuid_v7(unix_ms, random, out);
  const std::string_view uuid(out, sizeof out);
  for (size_t i = 0; i < uuid.size(); ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      EXPECT_EQ(uuid[i], '-') << uuid;
    } else {
      EXPECT_TRUE(is_lower_hex(uuid[i])) << uuid;
    }
  }
  EXPECT_EQ(uuid.substr(0, 13), "018cc251-f400");  // the 48-bit timestamp
  EXPECT_EQ(uuid[14], '7');                        // version
  EXPECT_NE(std::string_view("89ab").find(uuid[19]), std::string_view::npos);  // variant 10
}

TEST(RequestId, UuidsDifferAndSortByTime) {
  SeededRandom random(1);
  char a[kUuidLength], b[kUuidLength], c[kUuidLength];
  write_uuid_v7(1000, random, a);
  write_uuid_v7(1000, random, b);
  write_uuid_v7(1001, random, c);
  EXPECT_NE(std::string_view(a, kUuidLength), std::string_view(b, kUuidLength));
  EXPECT_LT(std::string_view(a, kUuidLength), std::string_view(c, kUuidLength));
  EXPECT_LT(std::string_view(b, kUuidLength), std::string_view(c, kUuidLength));
}

TEST(RequestId, TakesTheClientsOrMakesOne) {
  SeededRandom random(3);
  RequestId id;
  EXPECT_TRUE(id.assign("client-7", 5, random));
  EXPECT_EQ(id.view(), "client-7");
  EXPECT_FALSE(id.assign("bad id", 5, random));
  EXPECT_EQ(id.view().size(), kUuidLength);
  EXPECT_EQ(id.view()[14], '7');
  EXPECT_FALSE(id.assign("", 5, random));
  EXPECT_EQ(id.view().size(), kUuidLength);
}

}  // namespace
}  // namespace rolter
