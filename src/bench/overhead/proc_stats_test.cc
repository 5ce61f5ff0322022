#include "bench/overhead/proc_stats.h"

#include <unistd.h>

#include <gtest/gtest.h>

namespace rolter::bench::overhead {
namespace {

TEST(ProcStatsTest, ParsesStatEvenWithParenthesesInTheName) {
  const std::string stat =
      "4242 (nginx: worker (x)) S 4241 4241 4241 0 -1 4194624 1200 0 0 0 157 43 0 0 20 0 1 0 "
      "123456 12345678 1000 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0";
  auto t = parse_stat(stat);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->ppid, 4241);
  EXPECT_EQ(t->utime, 157u);
  EXPECT_EQ(t->stime, 43u);
  EXPECT_FALSE(parse_stat("4242 (x) S 1 2 3"));
  EXPECT_FALSE(parse_stat("no parenthesis"));
}

TEST(ProcStatsTest, ParsesStatus) {
  const std::string status =
      "Name:\trolter\nState:\tS (sleeping)\nVmPeak:\t  400000 kB\nVmHWM:\t   25600 kB\n"
      "VmRSS:\t   20480 kB\nThreads:\t3\n";
  auto m = parse_status(status);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->rss_kb, 20480u);
  EXPECT_EQ(m->hwm_kb, 25600u);
  EXPECT_FALSE(parse_status("Name:\tkthreadd\nState:\tS\n"));
  EXPECT_FALSE(parse_status("VmRSS:\t  lots kB\n"));
}

TEST(ProcStatsTest, FindsTheListenInodeOfAPort) {
  // Port 0x1F90 = 8080 listening (0A) on 127.0.0.1; an established connection (01) on it; and
  // 0x2328 = 9000 listening on every address.
  const std::string tcp =
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
      "timeout inode\n"
      "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        "
      "0 31337 1 0000000000000000 100 0 0 10 0\n"
      "   1: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        "
      "0 4444 1 0000000000000000 20 4 30 10 -1\n"
      "   2: 00000000:2328 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        "
      "0 777 1 0000000000000000 100 0 0 10 0";
  EXPECT_EQ(parse_listen_inode(tcp, 8080), 31337u);
  EXPECT_EQ(parse_listen_inode(tcp, 9000), 777u);
  EXPECT_FALSE(parse_listen_inode(tcp, 54321));  // only an established connection
  EXPECT_FALSE(parse_listen_inode(tcp, 1));
  const std::string tcp6 =
      "  sl  local_address                         remote_address                        st "
      "tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
      "   0: 00000000000000000000000000000000:0050 00000000000000000000000000000000:0000 0A "
      "00000000:00000000 00:00000000 00000000     0        0 99 1 0000000000000000 100 0 0 10 0\n";
  EXPECT_EQ(parse_listen_inode(tcp6, 80), 99u);
}

TEST(ProcStatsTest, ReadsThisProcess) {
  auto cpu = read_cpu_seconds({::getpid()});
  ASSERT_TRUE(cpu);
  EXPECT_GE(*cpu, 0);
  auto mem = read_memory({::getpid()});
  ASSERT_TRUE(mem);
  EXPECT_GT(mem->rss_kb, 0u);
  EXPECT_GE(mem->hwm_kb, mem->rss_kb);
  EXPECT_FALSE(read_cpu_seconds({}));
}

}  // namespace
}  // namespace rolter::bench::overhead
