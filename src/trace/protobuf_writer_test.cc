#include "trace/protobuf_writer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rolter {
namespace {

std::string bytes_of(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(static_cast<char>(v));
  return out;
}

// The encoding guide's own examples and one per wire type, byte for byte.
TEST(ProtoWriter, GoldenBytes) {
  struct Case {
    const char* what;
    void (*write)(ProtoWriter&);
    std::string expected;
  };
  const Case cases[] = {
      {"varint 150", [](ProtoWriter& w) { w.varint(1, 150); }, bytes_of({0x08, 0x96, 0x01})},
      {"string", [](ProtoWriter& w) { w.bytes(2, "testing"); },
       bytes_of({0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g'})},
      {"nested message",
       [](ProtoWriter& w) {
         const auto m = w.open(3);
         w.varint(1, 150);
         w.close(m);
       },
       bytes_of({0x1a, 0x03, 0x08, 0x96, 0x01})},
      {"empty nested message", [](ProtoWriter& w) { w.close(w.open(1)); }, bytes_of({0x0a, 0x00})},
      {"negative int64 is ten bytes", [](ProtoWriter& w) { w.int64(1, -1); },
       bytes_of({0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})},
      {"bool", [](ProtoWriter& w) { w.boolean(2, true); }, bytes_of({0x10, 0x01})},
      {"fixed64 little-endian", [](ProtoWriter& w) { w.fixed64(7, 0x0102030405060708); },
       bytes_of({0x39, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01})},
      {"double", [](ProtoWriter& w) { w.float64(4, 1.0); },
       bytes_of({0x21, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0, 0x3f})},
      {"fixed32 in field 16", [](ProtoWriter& w) { w.fixed32(16, 0x101); },
       bytes_of({0x85, 0x01, 0x01, 0x01, 0x00, 0x00})},
      {"a large field number", [](ProtoWriter& w) { w.varint(1000, 1); },
       bytes_of({0xc0, 0x3e, 0x01})},
  };
  for (const Case& c : cases) {
    ProtoWriter w;
    c.write(w);
    EXPECT_EQ(w.data(), c.expected) << c.what;
  }
}

TEST(ProtoWriter, LongNestedMessagesGetMultiByteLengths) {
  ProtoWriter w;
  const auto outer = w.open(1);
  const auto inner = w.open(2);
  w.bytes(3, std::string(200, 'x'));  // 1 + 2 + 200 = 203 bytes
  w.close(inner);                     // 1 + 2 + 203 = 206 bytes
  w.close(outer);
  const std::string& out = w.data();
  ASSERT_EQ(out.size(), 1 + 2 + 206u);
  EXPECT_EQ(out.substr(0, 3), bytes_of({0x0a, 0xce, 0x01}));  // 206
  EXPECT_EQ(out.substr(3, 3), bytes_of({0x12, 0xcb, 0x01}));  // 203
  EXPECT_EQ(out.substr(6, 3), bytes_of({0x1a, 0xc8, 0x01}));  // 200
  EXPECT_EQ(out.substr(9), std::string(200, 'x'));
}

}  // namespace
}  // namespace rolter
