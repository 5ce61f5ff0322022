#include "http/hop_by_hop.h"

#include <gtest/gtest.h>

namespace rolter {
namespace {

TEST(HopByHop, FixedFieldsWhateverTheCase) {
  for (const char* name :
       {"Connection", "keep-alive", "Proxy-Connection", "TE", "Trailer", "transfer-encoding",
        "Upgrade", "Proxy-Authorization", "Proxy-Authenticate", "HTTP2-Settings"}) {
    EXPECT_TRUE(is_fixed_hop_by_hop(name)) << name;
  }
  for (const char* name : {"Content-Type", "Authorization", "X-Request-Id", "Trailers", "T"}) {
    EXPECT_FALSE(is_fixed_hop_by_hop(name)) << name;
  }
}

TEST(HopByHop, FieldsNamedByConnection) {
  ConnectionOptions options;
  options.add("keep-alive, X-Custom-Hop ,,  x-other");
  options.add("close");
  EXPECT_TRUE(options.is_hop_by_hop("x-custom-hop"));
  EXPECT_TRUE(options.is_hop_by_hop("X-OTHER"));
  EXPECT_TRUE(options.is_hop_by_hop("Close"));
  EXPECT_TRUE(options.is_hop_by_hop("Upgrade"));
  EXPECT_FALSE(options.is_hop_by_hop("X-Custom"));
  EXPECT_FALSE(options.is_hop_by_hop("content-type"));
}

TEST(HopByHop, ManyOptionsAreAllHonoured) {
  ConnectionOptions options;
  std::string names[20];
  for (int i = 0; i < 20; ++i) {
    names[i] = "x-opt-" + std::to_string(i);
    options.add(names[i]);
  }
  for (const auto& name : names) EXPECT_TRUE(options.is_hop_by_hop(name)) << name;
}

}  // namespace
}  // namespace rolter
