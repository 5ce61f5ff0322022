#include "observe/process_metrics.h"

#include <gtest/gtest.h>

#include <ctime>
#include <string>

namespace rolter {
namespace {

// A real line's shape: the command name may hold blanks and parentheses.
constexpr const char* kStat =
    "4242 (rolter (x) y) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 9 0 "
    "123400 524288000 2560 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0\n";

TEST(ParseProcStatTest, ReadsTheFieldsAfterTheCommand) {
  const auto stat = parse_proc_stat(kStat, 100, 4096);
  ASSERT_TRUE(stat.has_value());
  EXPECT_DOUBLE_EQ(stat->cpu_seconds, 3.0);  // (250 + 50) ticks at 100 Hz
  EXPECT_DOUBLE_EQ(stat->start_seconds_after_boot, 1234.0);
  EXPECT_DOUBLE_EQ(stat->virtual_bytes, 524288000.0);
  EXPECT_DOUBLE_EQ(stat->resident_bytes, 2560.0 * 4096);
}

TEST(ParseProcStatTest, RefusesWhatItCannotRead) {
  for (const char* text : {"", "4242 (rolter) S 1 2 3", "4242 rolter S 1", "4242 (x) S a b c"}) {
    EXPECT_FALSE(parse_proc_stat(text, 100, 4096).has_value()) << text;
  }
}

TEST(ParseBootTimeTest, FindsTheBtimeLine) {
  EXPECT_EQ(parse_boot_time("cpu  1 2 3\nbtime 1700000000\nprocesses 9\n"), 1700000000.0);
  EXPECT_EQ(parse_boot_time("btime 12\n"), 12.0);
  EXPECT_FALSE(parse_boot_time("cpu 1 2 3\n").has_value());
}

TEST(CollectProcessMetricsTest, ThisProcessHasPlausibleValues) {
  double start = 0, rss = 0, fds = 0, max_fds = 0;
  for (const auto& family : collect_process_metrics()) {
    ASSERT_EQ(family.metric.size(), 1u) << family.name;
    const double v = family.type == prometheus::MetricType::Counter ? family.metric[0].counter.value
                                                                    : family.metric[0].gauge.value;
    if (family.name == "process_start_time_seconds") start = v;
    if (family.name == "process_resident_memory_bytes") rss = v;
    if (family.name == "process_open_fds") fds = v;
    if (family.name == "process_max_fds") max_fds = v;
  }
  const double now = static_cast<double>(std::time(nullptr));
  EXPECT_GT(start, now - 3600);
  EXPECT_LE(start, now + 1);
  EXPECT_GT(rss, 1 << 20);
  EXPECT_GE(fds, 3);  // stdin, stdout, stderr
  EXPECT_GE(max_fds, fds);
}

}  // namespace
}  // namespace rolter
