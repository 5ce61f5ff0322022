#include "common/cidr.h"

#include <gtest/gtest.h>

namespace rolter {
namespace {

struct Case {
  const char* network;
  const char* address;
  bool inside;
};

TEST(Cidr, Contains) {
  const Case cases[] = {
      {"127.0.0.1", "127.0.0.1", true},
      {"127.0.0.1", "127.0.0.2", false},
      {"10.0.0.0/8", "10.255.1.2", true},
      {"10.0.0.0/8", "11.0.0.1", false},
      {"10.0.0.0/8", "::ffff:10.1.2.3", true},  // dual-stack peer
      {"0.0.0.0/0", "192.168.1.1", true},
      {"0.0.0.0/0", "::1", false},  // all of IPv4, not IPv6
      {"::1", "::1", true},
      {"fd00::/8", "fd12:3456::1", true},
      {"fd00::/8", "fe80::1", false},
      {"192.168.1.128/25", "192.168.1.200", true},
      {"192.168.1.128/25", "192.168.1.100", false},
      {"10.0.0.0/8", "not-an-address", false},
  };
  for (const auto& c : cases) {
    auto cidr = Cidr::parse(c.network);
    ASSERT_TRUE(cidr) << c.network << ": " << cidr.error();
    EXPECT_EQ(cidr->contains(c.address), c.inside) << c.network << " ∋ " << c.address;
  }
}

TEST(Cidr, RejectsBadNetworks) {
  for (const char* bad : {"", "10.0.0.0/33", "::/129", "10.0.0/8", "10.0.0.0/", "10.0.0.0/8x",
                          "host.example", "10.0.0.0/-1"}) {
    EXPECT_FALSE(Cidr::parse(bad)) << bad;
  }
}

}  // namespace
}  // namespace rolter
