#include "bench/overhead/peer_spec.h"

#include <gtest/gtest.h>

namespace rolter::bench::overhead {
namespace {

TEST(PeerSpecTest, ParsesPeersAndTheirHeaders) {
  auto peers =
      parse_peers({"portkey=http://127.0.0.1:8787", "node=http://localhost:9000/base/"},
                  {"portkey:x-portkey-provider=openai",
                   "portkey:x-portkey-custom-host={upstream}/v1", "node:x-upstream={upstream}"});
  ASSERT_TRUE(peers) << peers.error();
  ASSERT_EQ(peers->size(), 2u);
  EXPECT_EQ((*peers)[0].name, "portkey");
  EXPECT_EQ((*peers)[0].url, "http://127.0.0.1:8787");
  EXPECT_EQ((*peers)[1].url, "http://localhost:9000/base");
  ASSERT_EQ((*peers)[0].headers.size(), 2u);
  EXPECT_EQ((*peers)[0].headers[1].first, "x-portkey-custom-host");
  EXPECT_EQ((*peers)[0].headers[1].second, "{upstream}/v1");

  substitute_upstream(*peers, "http://127.0.0.1:9001");
  EXPECT_EQ((*peers)[0].headers[0].second, "openai");
  EXPECT_EQ((*peers)[0].headers[1].second, "http://127.0.0.1:9001/v1");
  EXPECT_EQ((*peers)[1].headers[0].second, "http://127.0.0.1:9001");
}

TEST(PeerSpecTest, HeaderValueMayHoldColonsAndEquals) {
  auto peers = parse_peers({"p=http://127.0.0.1:1"}, {"p:authorization=Bearer a=b:c"});
  ASSERT_TRUE(peers) << peers.error();
  EXPECT_EQ((*peers)[0].headers[0].first, "authorization");
  EXPECT_EQ((*peers)[0].headers[0].second, "Bearer a=b:c");
}

TEST(PeerSpecTest, SubstitutesEveryPlaceholder) {
  EXPECT_EQ(substitute_upstream("{upstream},{upstream}", "u"), "u,u");
  EXPECT_EQ(substitute_upstream("none", "u"), "none");
  // A replacement that contains the placeholder is not expanded again.
  EXPECT_EQ(substitute_upstream("{upstream}!", "{upstream}"), "{upstream}!");
}

TEST(PeerSpecTest, RejectsBadArguments) {
  struct Case {
    std::vector<std::string> peers, headers;
    std::string error;
  };
  const Case cases[] = {
      {{"noequals"}, {}, "expected NAME=URL"},
      {{"=http://127.0.0.1:1"}, {}, "the name must be"},
      {{"a b=http://127.0.0.1:1"}, {}, "the name must be"},
      {{"rolter=http://127.0.0.1:1"}, {}, "built-in path"},
      {{"direct=http://127.0.0.1:1"}, {}, "built-in path"},
      {{"p=http://127.0.0.1:1", "p=http://127.0.0.1:2"}, {}, "given twice"},
      {{"p=ftp://x"}, {}, "--peer p=ftp://x"},
      {{"p=https://127.0.0.1:1"}, {}, "only http://"},
      {{"p=http://127.0.0.1:1"}, {"p-x=1"}, "expected NAME:HEADER=VALUE"},
      {{"p=http://127.0.0.1:1"}, {"p:x"}, "expected NAME:HEADER=VALUE"},
      {{"p=http://127.0.0.1:1"}, {"q:x=1"}, "no --peer named \"q\""},
      {{"p=http://127.0.0.1:1"}, {"p:=1"}, "is not a header name"},
      {{"p=http://127.0.0.1:1"}, {"p:a b=1"}, "is not a header name"},
  };
  for (const Case& c : cases) {
    auto r = parse_peers(c.peers, c.headers);
    ASSERT_FALSE(r) << c.error;
    EXPECT_NE(r.error().find(c.error), std::string::npos) << r.error();
  }
}

}  // namespace
}  // namespace rolter::bench::overhead
