// The access log's writer: its destinations, reopening after a rotation, refusals that keep the
// old destination, failed writes, and no line lost or torn while writers on several threads race a
// thread that renames the file and reopens it as fast as it can.
#include "proxy/access_log_writer.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace rolter {
namespace {

namespace fs = std::filesystem;

std::mutex console_mu;
std::vector<std::string> console_lines;

void to_console(std::string_view line) {
  std::lock_guard lock(console_mu);
  console_lines.emplace_back(line);
}

std::vector<std::string> lines_of(const fs::path& file) {
  std::vector<std::string> lines;
  std::ifstream in(file, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      lines.push_back(text.substr(start) + "<no newline>");
      break;
    }
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

class AccessLogWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("rolter_access_writer_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::lock_guard lock(console_mu);
    console_lines.clear();
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
};

TEST_F(AccessLogWriterTest, Destinations) {
  AccessLogWriter log(to_console);
  EXPECT_EQ(log.destination(), "stderr");
  EXPECT_TRUE(log.enabled());
  log.write("to the console");

  ASSERT_TRUE(log.set_destination("off"));
  EXPECT_FALSE(log.enabled());
  log.write("nowhere");

  const fs::path file = dir_ / "access.log";
  ASSERT_TRUE(log.set_destination(file.string()));
  EXPECT_EQ(log.destination(), file.string());
  log.write("first");
  log.write("second");
  ASSERT_TRUE(log.set_destination("stderr"));
  log.write("console again");

  EXPECT_EQ(lines_of(file), (std::vector<std::string>{"first", "second"}));
  std::lock_guard lock(console_mu);
  EXPECT_EQ(console_lines, (std::vector<std::string>{"to the console", "console again"}));
}

TEST_F(AccessLogWriterTest, AppendsToWhatIsThereWithPrivateMode) {
  const fs::path file = dir_ / "access.log";
  std::ofstream(file) << "from before\n";
  const fs::path fresh = dir_ / "fresh.log";
  AccessLogWriter log(to_console);
  ASSERT_TRUE(log.set_destination(file.string()));
  log.write("appended");
  EXPECT_EQ(lines_of(file), (std::vector<std::string>{"from before", "appended"}));
  ASSERT_TRUE(log.set_destination(fresh.string()));
  struct stat st {};
  ASSERT_EQ(::stat(fresh.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0077 & ~0040, 0u) << "no one but the owner and its group reads it";
}

TEST_F(AccessLogWriterTest, ReopenFollowsARename) {
  const fs::path file = dir_ / "access.log";
  AccessLogWriter log(to_console);
  ASSERT_TRUE(log.set_destination(file.string()));
  log.write("one");
  fs::rename(file, dir_ / "access.log.1");
  log.write("two");  // still the renamed file: it is the one open
  // Naming the same file again (a reload that kept it) does not reopen it.
  ASSERT_TRUE(log.set_destination(file.string()));
  log.write("three");
  EXPECT_FALSE(fs::exists(file));
  ASSERT_TRUE(log.reopen());
  log.write("four");
  EXPECT_EQ(lines_of(dir_ / "access.log.1"), (std::vector<std::string>{"one", "two", "three"}));
  EXPECT_EQ(lines_of(file), (std::vector<std::string>{"four"}));
}

// Threads that logged before a rotation write their next line to the new file, each through its
// own descriptor.
TEST_F(AccessLogWriterTest, EveryThreadFollowsAReopenAtItsNextLine) {
  const fs::path file = dir_ / "access.log";
  AccessLogWriter log(to_console);
  ASSERT_TRUE(log.set_destination(file.string()));
  std::atomic<int> first_written{0};
  std::atomic<bool> reopened{false};
  auto writer = [&](const std::string& name) {
    log.write(name + " before");
    first_written.fetch_add(1);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!reopened.load() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
    log.write(name + " after");
  };
  std::thread a(writer, "a");
  std::thread b(writer, "b");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (first_written.load() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  EXPECT_EQ(first_written.load(), 2) << "the writers did not start within 10 s";
  fs::rename(file, dir_ / "access.log.1");
  const auto reopen = log.reopen();
  reopened.store(true);
  a.join();
  b.join();
  ASSERT_TRUE(reopen) << reopen.error();
  auto old_lines = lines_of(dir_ / "access.log.1");
  auto new_lines = lines_of(file);
  std::sort(old_lines.begin(), old_lines.end());
  std::sort(new_lines.begin(), new_lines.end());
  EXPECT_EQ(old_lines, (std::vector<std::string>{"a before", "b before"}));
  EXPECT_EQ(new_lines, (std::vector<std::string>{"a after", "b after"}));
}

// A writer made where a destroyed one was does not write through the old one's descriptor.
TEST_F(AccessLogWriterTest, AWriterInAnotherOnesPlaceWritesToItsOwnFile) {
  const fs::path first = dir_ / "first.log";
  const fs::path second = dir_ / "second.log";
  alignas(AccessLogWriter) unsigned char storage[sizeof(AccessLogWriter)];
  auto* log = new (storage) AccessLogWriter(to_console);
  ASSERT_TRUE(log->set_destination(first.string()));
  log->write("to first");
  log->~AccessLogWriter();
  log = new (storage) AccessLogWriter(to_console);  // the same address
  ASSERT_TRUE(log->set_destination(second.string()));
  log->write("to second");
  log->~AccessLogWriter();
  EXPECT_EQ(lines_of(first), (std::vector<std::string>{"to first"}));
  EXPECT_EQ(lines_of(second), (std::vector<std::string>{"to second"}));
}

TEST_F(AccessLogWriterTest, RefusalsKeepTheOldDestination) {
  const fs::path file = dir_ / "access.log";
  AccessLogWriter log(to_console);
  ASSERT_TRUE(log.set_destination(file.string()));
  auto refused = log.set_destination(dir_.string());
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().find(dir_.string()), std::string::npos) << refused.error();
  EXPECT_FALSE(log.set_destination(""));
  EXPECT_FALSE(log.set_destination((dir_ / "missing" / "a.log").string()));
  EXPECT_EQ(log.destination(), file.string());
  log.write("kept");
  // A reopen that fails (the path is now a directory) keeps the file that is open.
  fs::rename(file, dir_ / "access.log.1");
  fs::create_directory(file);
  auto reopened = log.reopen();
  ASSERT_FALSE(reopened);
  EXPECT_NE(reopened.error().find("access.log"), std::string::npos) << reopened.error();
  log.write("still kept");
  EXPECT_EQ(lines_of(dir_ / "access.log.1"), (std::vector<std::string>{"kept", "still kept"}));
  // Nothing to reopen on the console.
  ASSERT_TRUE(log.set_destination("stderr"));
  EXPECT_TRUE(log.reopen());
}

TEST_F(AccessLogWriterTest, FailedWritesAreCounted) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  AccessLogWriter log(to_console);
  ASSERT_TRUE(log.set_destination("/dev/full"));
  log.write("lost");
  log.write("lost too");
  EXPECT_EQ(log.failed_writes(), 2u);
}

// Writers never stop while another thread renames the file and reopens it, again and again:
// every line lands whole in one of the files, exactly once.
TEST_F(AccessLogWriterTest, NoLineLostOrTornWhileReopening) {
  constexpr int kWriters = 4;
  constexpr int kLinesEach = 5000;
  const fs::path file = dir_ / "access.log";
  AccessLogWriter log(to_console);
  ASSERT_TRUE(log.set_destination(file.string()));
  // Lines long enough that a torn or interleaved write would show.
  const std::string padding(300, 'x');
  std::atomic<int> running{kWriters};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < kLinesEach; ++i) {
        log.write("{\"w\":" + std::to_string(w) + ",\"i\":" + std::to_string(i) + ",\"pad\":\"" +
                  padding + "\"}");
      }
      running.fetch_sub(1);
    });
  }
  int rotations = 0;
  while (running.load() > 0) {
    fs::rename(file, dir_ / ("access.log." + std::to_string(++rotations)));
    ASSERT_TRUE(log.reopen());
  }
  for (auto& t : writers) t.join();
  EXPECT_GT(rotations, 1);

  std::set<std::pair<int, int>> seen;
  size_t total = 0;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    for (const std::string& line : lines_of(entry.path())) {
      ++total;
      int w = -1;
      int i = -1;
      char pad[400] = {};
      const int fields =
          std::sscanf(line.c_str(), "{\"w\":%d,\"i\":%d,\"pad\":\"%399[x]\"}", &w, &i, pad);
      ASSERT_EQ(fields, 3) << "torn line: " << line;
      ASSERT_EQ(std::string(pad), padding) << "torn line: " << line;
      ASSERT_EQ(line.back(), '}') << "torn line: " << line;
      EXPECT_TRUE(seen.emplace(w, i).second) << "twice: " << line;
    }
  }
  EXPECT_EQ(total, size_t{kWriters} * kLinesEach);
  EXPECT_EQ(seen.size(), size_t{kWriters} * kLinesEach);
  EXPECT_EQ(log.failed_writes(), 0u);
}

// Writers never stop while another thread switches the destination between the console and a
// file: every line lands once, on the console or in the file.
TEST_F(AccessLogWriterTest, NoLineLostWhileSwitchingBetweenConsoleAndFile) {
  constexpr int kWriters = 4;
  constexpr int kLinesEach = 5000;
  const fs::path file = dir_ / "access.log";
  AccessLogWriter log(to_console);
  std::atomic<int> running{kWriters};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < kLinesEach; ++i) {
        log.write(std::to_string(w) + " " + std::to_string(i));
      }
      running.fetch_sub(1);
    });
  }
  int switches = 0;
  while (running.load() > 0) {
    ASSERT_TRUE(log.set_destination(++switches % 2 ? file.string() : "stderr"));
  }
  for (auto& t : writers) t.join();
  EXPECT_GT(switches, 1);

  std::vector<std::string> all = lines_of(file);
  {
    std::lock_guard lock(console_mu);
    all.insert(all.end(), console_lines.begin(), console_lines.end());
  }
  std::set<std::string> seen(all.begin(), all.end());
  EXPECT_EQ(all.size(), size_t{kWriters} * kLinesEach);
  EXPECT_EQ(seen.size(), size_t{kWriters} * kLinesEach);
}

}  // namespace
}  // namespace rolter
