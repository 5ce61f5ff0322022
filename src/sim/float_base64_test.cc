#include "sim/float_base64.h"

#include <gtest/gtest.h>

#include <vector>

namespace rolter::sim {
namespace {

TEST(FloatBase64Test, LittleEndianFloat32) {
  // Expected strings from Python: base64.b64encode(struct.pack('<Nf', ...)).
  struct Case {
    std::vector<float> values;
    const char* want;
  };
  const Case cases[] = {
      {{}, ""},
      {{1.0f}, "AACAPw=="},                       // 00 00 80 3f
      {{-2.0f}, "AAAAwA=="},                      // 00 00 00 c0
      {{1.0f, 0.5f}, "AACAPwAAAD8="},             // two values: 8 bytes, one '=' of padding
      {{0.0f, 1.0f, -1.0f}, "AAAAAAAAgD8AAIC/"},  // 12 bytes: no padding
  };
  for (const Case& c : cases) {
    EXPECT_EQ(float32_base64(c.values), c.want) << "values: " << c.values.size();
  }
}

}  // namespace
}  // namespace rolter::sim
