#include "bench/windowed_imbalance.h"

#include <gtest/gtest.h>

namespace rolter::bench {
namespace {

TEST(WindowedImbalance, EvenSpreadIsOne) {
  WindowedImbalance w(4);
  for (int i = 0; i < 40; ++i) w.add(i * 1000.0, static_cast<size_t>(i % 4));
  EXPECT_DOUBLE_EQ(w.median(), 1.0);
}

TEST(WindowedImbalance, MedianOverWindowsOfMaxOverMean) {
  WindowedImbalance w(2, 1000);
  // Window 0: 3 vs 1 -> max/mean 3/2. Window 1: 2 vs 2 -> 1. Window 2: 4 vs 0 -> 2.
  for (double t : {0.0, 10.0, 20.0}) w.add(t, 0);
  w.add(30, 1);
  w.add(1000, 0);
  w.add(1100, 0);
  w.add(1200, 1);
  w.add(1300, 1);
  for (double t : {2000.0, 2100.0, 2200.0, 2300.0}) w.add(t, 0);
  const auto windows = w.per_window();
  ASSERT_EQ(windows.size(), 3u);
  EXPECT_DOUBLE_EQ(windows[0], 1.5);
  EXPECT_DOUBLE_EQ(windows[1], 1.0);
  EXPECT_DOUBLE_EQ(windows[2], 2.0);
  EXPECT_DOUBLE_EQ(w.median(), 1.5);
}

TEST(WindowedImbalance, EmptyWindowsAndStrayInputAreSkipped) {
  WindowedImbalance w(2, 1000);
  w.add(0, 0);
  w.add(0, 1);
  w.add(5500, 0);  // windows 1..4 stay empty
  w.add(5600, 1);
  w.add(100, 7);  // no such engine
  w.add(-1, 0);   // before the replay
  EXPECT_EQ(w.per_window().size(), 2u);
  EXPECT_DOUBLE_EQ(w.median(), 1.0);
  EXPECT_DOUBLE_EQ(WindowedImbalance(3).median(), 0.0);
}

}  // namespace
}  // namespace rolter::bench
